// A throwaway PostgreSQL cluster for the end-to-end suite, made as
// internal/pgtest makes them for the Go tests: Debian's initdb and pg_ctl
// (.ci/run installs postgresql when it is missing), a temporary directory,
// a Unix socket only, durability off; as the postgres user when the suite
// runs as root (initdb refuses root).
//
//   const pg = await startPostgres();
//   ... store: { path: pg.url } ...
//   await pg.stop();
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, chownSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

// pgBin is the directory of initdb and pg_ctl, or "".
function findBin() {
  const base = "/usr/lib/postgresql";
  if (!existsSync(base)) return "";
  const versions = readdirSync(base).filter((v) => existsSync(path.join(base, v, "bin", "initdb"))).sort((a, b) => Number(b) - Number(a));
  return versions.length ? path.join(base, versions[0], "bin") : "";
}

export const pgBin = findBin();

// postgresMissing is why the tests that need PostgreSQL cannot run here,
// or "". In CI (CI=true) a missing PostgreSQL is a failure: startPostgres
// throws.
export const postgresMissing = pgBin ? "" : "PostgreSQL's initdb and pg_ctl are not installed (Debian: apt-get install postgresql), as .ci/run does";

export const skipPostgres = postgresMissing && process.env.CI !== "true" ? postgresMissing : false;

// startPostgres makes and starts a cluster and resolves with { url, stop }:
// url is a postgres:// URL of its postgres database over the socket.
export async function startPostgres() {
  if (postgresMissing) throw new Error(postgresMissing);
  const dir = mkdtempSync(path.join(tmpdir(), "codemode-e2e-pg-"));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { stdout } = await run("id", ["-u", "postgres"]);
    const { stdout: gid } = await run("id", ["-g", "postgres"]);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const pg = (prog, args) => (asRoot ? run("runuser", ["-u", "postgres", "--", path.join(pgBin, prog), ...args]) : run(path.join(pgBin, prog), args));
  const data = path.join(dir, "data");
  try {
    await pg("initdb", ["-D", data, "--auth=trust", "--username=postgres", "--encoding=UTF8", "--no-sync"]);
    const opts = `-k ${dir} -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
    await pg("pg_ctl", ["-D", data, "-l", path.join(dir, "server.log"), "-o", opts, "-w", "-t", "60", "start"]);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  let stopped = false;
  return {
    url: `postgres://postgres@/postgres?host=${dir}&sslmode=disable`,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      try {
        await pg("pg_ctl", ["-D", data, "-m", "fast", "-w", "-t", "30", "stop"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
