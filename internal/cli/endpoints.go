package cli

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
)

// defaultPortBase is the port of rank 0's default endpoint: rank R
// listens on 127.0.0.1:(defaultPortBase+R) unless -endpoints says
// otherwise (Paddle's launcher numbers its trainers' ports from 6170 too).
const defaultPortBase = 6170

// parseEndpoints reads -endpoints: host:port entries, comma-separated, no
// two alike. An empty text is the default (nil).
func parseEndpoints(text string) ([]string, error) {
	if text == "" {
		return nil, nil
	}
	list := strings.Split(text, ",")
	for i, ep := range list {
		host, port, err := net.SplitHostPort(ep)
		if err != nil || host == "" {
			return nil, fmt.Errorf("entry %d %q is not host:port", i+1, ep)
		}
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
			return nil, fmt.Errorf("entry %d %q: port %q is not 1 to 65535", i+1, ep, port)
		}
		if j := slices.Index(list[:i], ep); j >= 0 {
			return nil, fmt.Errorf("entries %d and %d are both %q", j+1, i+1, ep)
		}
	}
	return list, nil
}

// endpointOf returns each rank's endpoint: the i-th of list for the i-th
// of ranks (ascending), or with no list 127.0.0.1:(6170+rank).
func endpointOf(list []string, ranks []int) func(rank int) (string, error) {
	return func(rank int) (string, error) {
		if list != nil {
			i := slices.Index(ranks, rank)
			if i < 0 || i >= len(list) {
				return "", fmt.Errorf("rank %d has no endpoint in -endpoints", rank)
			}
			return list[i], nil
		}
		if p := defaultPortBase + rank; p <= 65535 {
			return "127.0.0.1:" + strconv.Itoa(p), nil
		}
		return "", fmt.Errorf("rank %d: the default endpoint 127.0.0.1:%d is no port: give -endpoints", rank, defaultPortBase+rank)
	}
}
