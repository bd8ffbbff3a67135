package paddle

import (
	"fmt"
	"strings"
	"testing"

	"github.com/distpass/distpass/ir"
	"github.com/distpass/distpass/lower"
	"github.com/distpass/distpass/passes"
)

func localEndpoint(r int) (string, error) { return fmt.Sprintf("127.0.0.1:%d", 6170+r), nil }

// AddCommSetup refuses what it cannot set up, and sets up nothing twice.
func TestAddCommSetupErrors(t *testing.T) {
	serial := mlpModule(t)
	if err := AddCommSetup(serial, localEndpoint); err == nil || err.Error() != "paddle: communicator set-up: the module is serial, not a rank's" {
		t.Errorf("serial: %v", err)
	}
	rank := func() *ir.Module {
		m := mlpModule(t)
		if err := passes.Partition(m, lower.DefaultRegistry(), 3); err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := rank()
	if err := AddCommSetup(m, localEndpoint); err != nil {
		t.Fatal(err)
	}
	if err := AddCommSetup(m, localEndpoint); err == nil || !strings.HasPrefix(err.Error(), "paddle: rank 3: startup program op ") || !strings.HasSuffix(err.Error(), " c_gen_nccl_id: the communicators are set up already") {
		t.Errorf("twice: %v", err)
	}
	m = rank()
	m.Groups = m.Groups[:1]
	if err := AddCommSetup(m, localEndpoint); err == nil || err.Error() != "paddle: rank 3: ring_id 2 names no process group" {
		t.Errorf("no group: %v", err)
	}
	m = rank()
	for i := range m.Groups {
		m.Groups[i].Ranks = []int{0, 1}
	}
	if err := AddCommSetup(m, localEndpoint); err == nil || err.Error() != "paddle: rank 3: ring_id 2 names group [0 1], which does not hold the rank" {
		t.Errorf("rank not in group: %v", err)
	}
	m = rank()
	noPort := func(r int) (string, error) { return "", fmt.Errorf("rank %d has no endpoint", r) }
	if err := AddCommSetup(m, noPort); err == nil || err.Error() != "rank 1 has no endpoint" {
		t.Errorf("no endpoint: %v", err)
	}
}
