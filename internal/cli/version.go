package cli

import (
	"cmp"
	"fmt"
	"path/filepath"
	"runtime"

	"github.com/codemode-mcp/codemode-mcp/config"
	"github.com/codemode-mcp/codemode-mcp/internal/app"
)

// cmdVersion prints the version and the files a command with the same
// --config and --db would use: the config file, the execution log and the
// cache directory. It creates nothing.
func cmdVersion(args []string, env Env) error {
	var c common
	fs := newFlags("version", env, &c)
	if err := parseNone(fs, args, env.Stdout); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "codemode-mcp %s (%s, %s/%s)\n", version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	cfg, err := loadConfig(c)
	if err != nil {
		return err
	}
	if cfg.Path == "" {
		fmt.Fprintf(env.Stdout, "config: none (the built-in notes connector; looked for --config, $%s and ./%s)\n", config.EnvConfig, config.DefaultFile)
	} else {
		abs, _ := filepath.Abs(cfg.Path) // "" when it cannot be made absolute
		fmt.Fprintf(env.Stdout, "config: %s\n", cmp.Or(abs, cfg.Path))
	}
	db, err := app.StorePath(cfg, c.db)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "log:    %s\n", app.StoreDisplay(db))
	fmt.Fprintf(env.Stdout, "cache:  %s\n", cmp.Or(app.CacheDir(cfg), "none (no user cache directory: OpenAPI documents are not cached)"))
	return nil
}
