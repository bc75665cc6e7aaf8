// Reads a YAML file with gopkg.in/yaml.v3, the library Docker Compose v2 parses compose files with, and prints
// it as JSON, so a test can compare it with its own parse (decision 0191). Exit 1 with the library's message when
// the file does not parse. Build offline with Debian's golang-go and golang-gopkg-yaml.v3-dev:
//   GOPATH=/usr/share/gocode GO111MODULE=off go build -o compose-yaml main.go
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"gopkg.in/yaml.v3"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: compose-yaml <file.yaml>")
		os.Exit(2)
	}
	text, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var doc map[string]interface{}
	if err := yaml.Unmarshal(text, &doc); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out, err := json.Marshal(doc)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(string(out))
}
