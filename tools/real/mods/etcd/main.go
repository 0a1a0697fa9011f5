// The etcd server: the same two lines as etcd's own main.go (go.etcd.io/etcd/v3 main.go at
// v3.6.16), built from go.etcd.io/etcd/server/v3 because the root module go.etcd.io/etcd/v3
// replaces its sub-modules with local paths and cannot be built with `go build module@version`.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
