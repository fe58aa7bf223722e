package backoff

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDelay(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	for _, tc := range []struct {
		p    Policy
		want []time.Duration
	}{
		{Policy{}, []time.Duration{0, ms(500), ms(1000), ms(2000), ms(4000), ms(8000), ms(16000), ms(30000), ms(30000)}},
		{Policy{First: ms(100), Max: ms(300)}, []time.Duration{0, ms(100), ms(200), ms(300), ms(300), ms(300), ms(300), ms(300), ms(300)}},
	} {
		var got []time.Duration
		for f := range 9 {
			got = append(got, tc.p.Delay(f))
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%+v: delays (-want +got):\n%s", tc.p, diff)
		}
	}
}
