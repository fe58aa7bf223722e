package bench

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"
)

// echoWorkEnv, when set in this test binary's environment, makes it an
// echo child: it answers each line read from stdin after working (busily)
// for the given duration.
const echoWorkEnv = "CODEMODE_BENCH_ECHO_WORK"

// echoChild serves as an echo child when asked to; it reports whether it
// did (the process must then exit).
func echoChild() bool {
	v, ok := os.LookupEnv(echoWorkEnv)
	if !ok {
		return false
	}
	work, err := time.ParseDuration(v)
	if err != nil {
		os.Exit(2)
	}
	r := bufio.NewReader(os.Stdin)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return true
		}
		for start := time.Now(); time.Since(start) < work; {
		}
		if _, err := os.Stdout.Write(line); err != nil {
			return true
		}
	}
}

// BenchmarkPipeRoundTrip measures what one round trip over a pipe pair to
// another process costs on this machine beyond the other side's work:
// the child answers each line after working for work, while this side
// sleeps waiting. With no work both sides stay hot; once the wait is long
// enough for this side's CPU to go idle, waking it costs much more. That
// is the price of every process hop of a call (client -> server ->
// downstream, and with process isolation server -> worker), and why a
// sandbox worker costs more per call than its CPU time. The metric
// overhead-ns/op is ns/op minus work.
func BenchmarkPipeRoundTrip(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	for _, work := range []time.Duration{0, 20 * time.Microsecond, 50 * time.Microsecond, 120 * time.Microsecond} {
		b.Run("work="+work.String(), func(b *testing.B) {
			cmd := exec.Command(exe)
			cmd.Env = append(os.Environ(), echoWorkEnv+"="+work.String())
			in, r := startPiped(b, cmd)
			ping := []byte("ping\n")
			roundTrip := func() {
				if _, err := in.Write(ping); err != nil {
					b.Fatal(err)
				}
				if _, err := r.ReadBytes('\n'); err != nil && err != io.EOF {
					b.Fatal(err)
				}
			}
			for range 100 {
				roundTrip()
			}
			b.ResetTimer()
			for range b.N {
				roundTrip()
			}
			b.StopTimer()
			perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(perOp-float64(work.Nanoseconds()), "overhead-ns/op")
		})
	}
}
