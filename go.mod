module github.com/meshrti/meshrti

go 1.26
