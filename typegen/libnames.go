package typegen

import _ "embed"

// libTypeNames are the global type-space names (interfaces, type aliases,
// classes, enums and namespaces starting with an upper-case letter) declared
// by TypeScript's standard library files, DOM and web workers included, one
// per line. A generated type alias with one of these names would be a
// "Duplicate identifier" error when the declarations are checked as a
// script, so the namer never hands them out.
//
// libnames.txt is generated from typescript@5.9.3 with:
//
//	grep -hoE '^(declare )?(interface|type|class|enum|namespace|abstract class) [A-Z][A-Za-z0-9_$]*' \
//	  node_modules/typescript/lib/lib.*.d.ts | awk '{print $NF}' | sort -u
//
//go:embed libnames.txt
var libTypeNames string
