#!/usr/bin/env bash
# Builds the release archives of federate-node: a static binary (no cgo)
# for linux/amd64, linux/arm64, windows/amd64 and darwin/arm64, each
# with the release stamped in (federate-node version prints it), packed
# with the README, the systemd unit and its example configuration, and
# the container definition.
#
#   scripts/release.sh [VERSION] [OUTDIR]
#
# VERSION defaults to `git describe --tags --always --dirty`, OUTDIR to
# dist/. The archives are OUTDIR/federate-node-VERSION-OS-ARCH.tar.gz
# (.zip for windows), with SHA256SUMS beside them. Set PLATFORMS to build
# fewer ("linux/amd64 darwin/arm64").
set -euo pipefail
cd "$(dirname "$0")/.."

version="${1:-$(git describe --tags --always --dirty 2>/dev/null || echo devel)}"
out="${2:-dist}"
platforms="${PLATFORMS:-linux/amd64 linux/arm64 windows/amd64 darwin/arm64}"
commit="$(git rev-parse HEAD 2>/dev/null || true)"

mkdir -p "$out"
out="$(cd "$out" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

for p in $platforms; do
	os="${p%/*}"
	arch="${p#*/}"
	name="federate-node-$version-$os-$arch"
	dir="$work/$name"
	mkdir -p "$dir"
	exe=federate-node
	[ "$os" = windows ] && exe=federate-node.exe
	echo "== $name"
	# -trimpath: no local paths in the binary; CGO_ENABLED=0: static;
	# -buildvcs: the commit in the build information; the stamp: the
	# release, also when built outside a clone at a tag.
	CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" GOFLAGS= go build -trimpath -buildvcs=auto \
		-ldflags "-s -w -X github.com/meshrti/meshrti/version.stamp=$version" \
		-o "$dir/$exe" ./cmd/federate-node
	cp README.md "$dir/"
	mkdir -p "$dir/deploy"
	cp -r deploy/systemd deploy/container "$dir/deploy/"
	if [ "$os" = windows ]; then
		rm -f "$out/$name.zip"
		if command -v zip >/dev/null 2>&1; then
			(cd "$work" && zip -qr "$out/$name.zip" "$name")
		else
			(cd "$work" && python3 -c 'import shutil,sys; shutil.make_archive(sys.argv[1], "zip", ".", sys.argv[2])' "$out/$name" "$name")
		fi
	else
		tar -C "$work" -czf "$out/$name.tar.gz" --owner=0 --group=0 "$name"
	fi
done
(cd "$out" && sha256sum federate-node-"$version"-* > SHA256SUMS)
echo "release $version (commit ${commit:-unknown}) in $out:"
ls -1 "$out"
