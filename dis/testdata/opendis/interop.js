// The other side of dis/opendis_test.go: PDUs made and read by open-dis
// (the npm package, 1.3.6), an implementation of IEEE 1278.1 that is not
// meshrti's.
//
//   node interop.js send VERSION HOST PORT < specs
//     Each line of stdin is a JSON object {"type": "EntityStatePdu", "fields": {...}}:
//     an open-dis PDU of that type (dis6 or dis7) with those fields set, encoded
//     by open-dis and sent to HOST:PORT. An AttributePdu may have "sets":
//     [{"entity": [s, a, e], "records": [{"type": T, "name": N, "value": [octets]}]}],
//     written after open-dis's fixed part (open-dis 1.3.6 has no record sets)
//     as named records: name length, data length, name, value, padded to 64 bits.
//     Prints "sent TYPE" for each.
//   node interop.js recv VERSION
//     Listens on 127.0.0.1, prints "port N", then one line per datagram: the PDU
//     open-dis decodes, as JSON; Attribute PDUs (which open-dis's factory does
//     not know) decoded by its AttributePdu and InputStream.
//
// open-dis leaves the length field to the caller: it is written here.
"use strict";
const dgram = require("dgram");
const readline = require("readline");

const [mode, version] = process.argv.slice(2, 4);
const dis = version === "6" ? require("open-dis") : require("open-dis/dist/dis7.min.js");

// assign sets src's fields on target, keeping open-dis's objects.
function assign(target, src) {
  for (const [k, v] of Object.entries(src)) {
    if (v !== null && typeof v === "object" && !Array.isArray(v) && target[k] !== undefined && typeof target[k] === "object") {
      assign(target[k], v);
    } else {
      target[k] = v;
    }
  }
}

function encode(spec) {
  const pdu = new dis[spec.type]();
  assign(pdu, spec.fields);
  const buf = new ArrayBuffer(8192);
  const out = new dis.OutputStream(buf);
  pdu.encodeToBinary(out);
  for (const set of spec.sets || []) {
    for (const n of set.entity) out.writeUShort(n);
    out.writeUShort(set.records.length);
    for (const r of set.records) {
      const name = Buffer.from(r.name, "ascii");
      const n = 6 + 4 + name.length + r.value.length;
      const pad = (8 - (n % 8)) % 8;
      out.writeUInt(r.type);
      out.writeUShort(n + pad);
      out.writeUShort(name.length);
      out.writeUShort(r.value.length);
      for (const c of name) out.writeUByte(c);
      for (const c of r.value) out.writeUByte(c);
      for (let i = 0; i < pad; i++) out.writeUByte(0);
    }
  }
  const len = out.currentPosition;
  new DataView(buf).setUint16(8, len);
  return Buffer.from(buf.slice(0, len));
}

function decodeAttribute(data) {
  const ab = data.buffer.slice(data.byteOffset, data.byteOffset + data.length);
  const inp = new dis.InputStream(ab);
  const pdu = new dis.AttributePdu();
  pdu.initFromBinary(inp);
  pdu.sets = [];
  for (let i = 0; i < pdu.numberAttributeRecordSet; i++) {
    const set = { entity: [inp.readUShort(), inp.readUShort(), inp.readUShort()], records: [] };
    const nrec = inp.readUShort();
    for (let j = 0; j < nrec; j++) {
      const start = inp.currentPosition;
      const type = inp.readUInt();
      const length = inp.readUShort();
      const nameLen = inp.readUShort();
      const dataLen = inp.readUShort();
      let name = "";
      for (let k = 0; k < nameLen; k++) name += String.fromCharCode(inp.readUByte());
      const value = [];
      for (let k = 0; k < dataLen; k++) value.push(inp.readUByte());
      inp.currentPosition = start + length;
      set.records.push({ type, length, name, value });
    }
    pdu.sets.push(set);
  }
  return pdu;
}

if (mode === "send") {
  const [host, port] = process.argv.slice(4, 6);
  const sock = dgram.createSocket("udp4");
  const rl = readline.createInterface({ input: process.stdin });
  const queue = [];
  rl.on("line", (line) => { if (line.trim()) queue.push(JSON.parse(line)); });
  rl.on("close", async () => {
    for (const spec of queue) {
      const b = encode(spec);
      await new Promise((ok, fail) => sock.send(b, Number(port), host, (err) => (err ? fail(err) : ok())));
      console.log("sent " + spec.type);
      await new Promise((ok) => setTimeout(ok, 30));
    }
    sock.close();
  });
} else if (mode === "recv") {
  const factory = new dis.PduFactory();
  const sock = dgram.createSocket("udp4");
  sock.on("message", (msg) => {
    let pdu;
    try {
      if (msg[2] === 72) {
        pdu = decodeAttribute(msg);
      } else {
        pdu = factory.createPdu(msg.buffer.slice(msg.byteOffset, msg.byteOffset + msg.length));
      }
    } catch (e) {
      console.log(JSON.stringify({ error: String(e) }));
      return;
    }
    console.log(JSON.stringify(pdu));
  });
  sock.bind(0, "127.0.0.1", () => console.log("port " + sock.address().port));
} else {
  console.error("usage: node interop.js send VERSION HOST PORT | recv VERSION");
  process.exit(2);
}
