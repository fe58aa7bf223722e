// Command thingsapi is the local HTTP API of the OpenAPI benchmarks
// (bench/openapi_test.go), in a process of its own so that a GET made
// directly by the benchmark and one made by codemode-mcp both cross a
// process boundary, as they would against a real API: GET /things/{id}
// answers a small JSON object after -delay. It listens on 127.0.0.1, prints
// its address as its first line on stdout, and exits when stdin closes.
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

func main() {
	delay := flag.Duration("delay", 0, "how long each answer takes")
	flag.Parse()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "thingsapi:", err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr().String())
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if *delay > 0 {
			time.Sleep(*delay) // the API's own work
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":1,"name":"thing one","tags":["a","b"]}`)
	})}
	go func() {
		io.Copy(io.Discard, os.Stdin)
		srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, "thingsapi:", err)
		os.Exit(1)
	}
}
