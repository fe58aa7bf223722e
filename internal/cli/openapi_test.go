package cli_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/codemode-mcp/codemode-mcp/internal/cli"
)

// petsDocument is a small OpenAPI document served by petServer.
const petsDocument = `openapi: 3.0.3
info: { title: Pets, version: "1" }
servers: [{ url: "https://pets.invalid/v1" }]
paths:
  /pets:
    get:
      operationId: pets/list
      summary: List pets
      parameters:
        - { name: status, in: query, schema: { type: array, items: { type: string, enum: [available, sold] } } }
        - { name: limit, in: query, schema: { type: integer, maximum: 100 } }
      responses:
        "200": { description: Pets., content: { application/json: { schema: { type: array, items: { $ref: "#/components/schemas/Pet" } } } } }
    post:
      operationId: pets/create
      requestBody:
        required: true
        content: { application/json: { schema: { $ref: "#/components/schemas/NewPet" } } }
      responses:
        "201": { description: Created., content: { application/json: { schema: { $ref: "#/components/schemas/Pet" } } } }
  /pets/{petId}:
    get:
      operationId: pets/get
      parameters:
        - { name: petId, in: path, required: true, schema: { type: integer } }
      responses:
        "200": { description: A pet., content: { application/json: { schema: { $ref: "#/components/schemas/Pet" } } } }
        "404": { description: No such pet. }
  /search:
    post:
      operationId: pets/search
      requestBody:
        content: { application/json: { schema: { type: object, properties: { q: { type: string } } } } }
      responses:
        "200": { description: Found., content: { application/json: { schema: { type: array, items: { $ref: "#/components/schemas/Pet" } } } } }
  /whoami:
    get:
      operationId: whoami
      responses:
        "200": { description: The caller's key, echoed., content: { application/json: { schema: { type: object } } } }
components:
  schemas:
    NewPet:
      type: object
      required: [name]
      properties: { name: { type: string }, status: { type: string, enum: [available, sold] } }
    Pet:
      allOf:
        - $ref: "#/components/schemas/NewPet"
        - { type: object, required: [id], properties: { id: { type: integer } } }
`

// petServer is a live pet API on 127.0.0.1 that records the requests it
// gets and requires the API key.
type petServer struct {
	srv *httptest.Server
	key string

	mu   sync.Mutex
	reqs []string // "METHOD /path?query body"
}

func newPetServer(t *testing.T, key string) *petServer {
	p := &petServer{key: key}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *petServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	p.reqs = append(p.reqs, strings.TrimSpace(r.Method+" "+r.URL.RequestURI()+" "+string(body)))
	p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("X-Api-Key") != p.key {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"message":"bad key"}`)
		return
	}
	switch path := strings.TrimPrefix(r.URL.Path, "/v1"); {
	case path == "/pets" && r.Method == "GET":
		io.WriteString(w, `[{"id":1,"name":"Rex","status":"available"},{"id":2,"name":"Tom","status":"sold"}]`)
	case path == "/pets" && r.Method == "POST":
		w.WriteHeader(http.StatusCreated)
		var pet map[string]any
		json.Unmarshal(body, &pet)
		pet["id"] = 3
		json.NewEncoder(w).Encode(pet)
	case strings.HasPrefix(path, "/pets/") && r.Method == "DELETE":
		w.WriteHeader(http.StatusNoContent)
	case strings.HasPrefix(path, "/pets/"):
		if path != "/pets/1" {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"message":"Pet not found"}`)
			return
		}
		io.WriteString(w, `{"id":1,"name":"Rex","status":"available"}`)
	case path == "/search":
		io.WriteString(w, `[]`)
	case path == "/whoami":
		json.NewEncoder(w).Encode(map[string]string{"key": r.Header.Get("X-Api-Key")})
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func (p *petServer) requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.reqs...)
}

// petsConfig writes the document and a config using it with the API key
// from $PETS_KEY; extra is added to the connector's settings.
func petsConfig(t *testing.T, p *petServer, extra string) (cfg, db string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pets.yaml"), []byte(petsDocument), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg = filepath.Join(dir, "codemode.yaml")
	body := "store:\n  path: ./c.db\n  cache_dir: ./cache\napprovals:\n  elicitation: false\nconnectors:\n" +
		"  pets:\n    openapi: ./pets.yaml\n    base_url: " + strconv.Quote(p.srv.URL+"/v1") + "\n" +
		"    auth: { api_key: { in: header, name: X-Api-Key, value: \"${PETS_KEY}\" } }\n" + extra
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg, filepath.Join(dir, "c.db")
}

type outcome struct {
	Status      string          `json:"status"`
	ExecutionID string          `json:"executionId"`
	Result      json.RawMessage `json:"result"`
	Error       string          `json:"error"`
}

func runProgram(t *testing.T, cfg, code string) (outcome, string) {
	t.Helper()
	_, out, errs := run(t, "", "run", "--config", cfg, "--code", code)
	var o outcome
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		t.Fatalf("run %q: %v\nstdout: %s\nstderr: %s", code, err, out, errs)
	}
	var b bytes.Buffer
	if len(o.Result) > 0 && json.Compact(&b, o.Result) == nil {
		o.Result = b.Bytes()
	}
	return o, out
}

// TestOpenAPIConnector drives an OpenAPI connector through the command
// line against a live API, with process isolation: parameters reach the
// API, a POST pauses and sends its JSON body once approved, a 404 is a
// catchable Error with the status and body, no_approve lifts the approval
// of a POST that only searches, request follows the approval rule of its
// method, and the API key appears nowhere the model sees nor in the
// database.
func TestOpenAPIConnector(t *testing.T) {
	const key = "pets-key-5f0c9a"
	t.Setenv("PETS_KEY", key)
	p := newPetServer(t, key)
	cfg, db := petsConfig(t, p, "    no_approve: [pets_search]\n"+
		"    revert: { pets_create: \"(args, result) => pets.request({method: 'DELETE', path: '/pets/' + result.id})\" }\n")

	code, out, errs := run(t, "", "check", "--config", cfg)
	if code != cli.ExitOK || !strings.Contains(out, "✓ pets: 7 tools: pets_create, pets_get, pets_list, pets_search, request, spec, whoami") ||
		!strings.Contains(out, "requires approval: pets_create, request") {
		t.Fatalf("check: %d\n%s\n%s", code, out, errs)
	}

	o, _ := runProgram(t, cfg, `async () => (await pets.pets_list({status: ["available", "sold"], limit: 10})).map(p => p.name)`)
	if o.Status != "completed" || string(o.Result) != `["Rex","Tom"]` {
		t.Fatalf("list: %+v", o)
	}
	o, _ = runProgram(t, cfg, `async () => { try { await pets.pets_get({petId: 7}); } catch (e) { return [e.message, e.status, e.body.message]; } }`)
	if o.Status != "completed" || !strings.Contains(string(o.Result), "404") || !strings.Contains(string(o.Result), `404,"Pet not found"]`) {
		t.Fatalf("404: %+v", o)
	}
	o, _ = runProgram(t, cfg, `async () => await pets.pets_list({limit: 1000})`)
	if o.Status != "error" || !strings.Contains(o.Error, "/limit") {
		t.Fatalf("invalid argument: %+v", o)
	}

	o, _ = runProgram(t, cfg, `async () => await pets.pets_create({body: {name: "Kit", status: "lost"}})`)
	if o.Status != "error" || !strings.Contains(o.Error, "/body/status") {
		t.Fatalf("invalid body (a shared schema): %+v", o)
	}

	// A POST pauses before it is sent; approved, its body is sent once,
	// and the failed GET before it replays with its status.
	o, _ = runProgram(t, cfg, `async () => {
		let status;
		try { await pets.pets_get({petId: 8}); } catch (e) { status = e.status; }
		return [status, (await pets.pets_create({body: {name: "Kit", status: "available"}})).id];
	}`)
	if o.Status != "paused" {
		t.Fatalf("create: %+v", o)
	}
	if strings.Contains(strings.Join(p.requests(), "\n"), "POST") {
		t.Fatal("the POST was sent before approval")
	}
	code, out, errs = run(t, "", "approvals", "approve", o.ExecutionID, "--config", cfg)
	var approved outcome
	json.Unmarshal([]byte(out), &approved)
	var compact bytes.Buffer
	json.Compact(&compact, approved.Result)
	if code != cli.ExitOK || compact.String() != "[404,3]" {
		t.Fatalf("approve: %d\n%s\n%s", code, out, errs)
	}
	// Rollback reverts the POST through the configured revert, which
	// makes its DELETE without asking again.
	if code, out, errs = run(t, "", "approvals", "rollback", o.ExecutionID, "--config", cfg); code != cli.ExitOK || !strings.Contains(out, "rolled_back") {
		t.Fatalf("rollback: %d\n%s\n%s", code, out, errs)
	}

	// no_approve: a POST that only searches runs at once; request decides
	// by method.
	o, _ = runProgram(t, cfg, `async () => [await pets.pets_search({body: {q: "x"}}), (await pets.request({method: "GET", path: "/pets/1"})).body.name]`)
	if o.Status != "completed" || string(o.Result) != `[[],"Rex"]` {
		t.Fatalf("search and request GET: %+v", o)
	}
	o, _ = runProgram(t, cfg, `async () => await pets.request({method: "POST", path: "/pets", body: {name: "Zed"}})`)
	if o.Status != "paused" {
		t.Fatalf("request POST: %+v", o)
	}

	want := []string{
		"GET /v1/pets?status=available&status=sold&limit=10",
		"GET /v1/pets/7",
		"GET /v1/pets/8",
		`POST /v1/pets {"name":"Kit","status":"available"}`,
		"DELETE /v1/pets/3",
		`POST /v1/search {"q":"x"}`,
		"GET /v1/pets/1",
	}
	if got := p.requests(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// An API that echoes the key: the program and the log see it
	// redacted; the key is nowhere in the database file.
	o, raw := runProgram(t, cfg, `async () => { const r = await pets.whoami({}); console.log(JSON.stringify(r)); return r; }`)
	if o.Status != "completed" || strings.Contains(raw, key) || !strings.Contains(raw, "[redacted]") {
		t.Fatalf("echoed key: %s", raw)
	}
	code, out, _ = run(t, "", "executions", "show", o.ExecutionID, "--config", cfg)
	if code != cli.ExitOK || strings.Contains(out, key) {
		t.Fatalf("executions show: %d %s", code, out)
	}
	for _, f := range []string{db, db + "-wal"} {
		b, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if strings.Contains(string(b), key) {
			t.Errorf("%s holds the API key", f)
		}
	}
	code, out, errs = run(t, "", "types", "pets", "--config", cfg)
	if code != cli.ExitOK || strings.Contains(out, key) || !strings.Contains(out, "type PetsPet = PetsNewPet & { id: number };") ||
		!strings.Contains(out, "pets_get(input: PetsPetsGetInput): Promise<PetsPetsGetOutput>;") {
		t.Fatalf("types: %d\n%s\n%s", code, out, errs)
	}
}
