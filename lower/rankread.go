package lower

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/distpass/distpass/ir"
)

// ReadKind is what of the rank a lowering read.
type ReadKind uint8

// The facts of a rank a lowering may depend on besides the ring ids of its
// groups and an embedding's start_index, which rank classes recompute.
const (
	// ReadRank is the rank itself (Lowering.Rank, a point-to-point peer).
	ReadRank ReadKind = iota
	// ReadCoord is the rank's coordinate along a mesh dim (Lowering.Coord).
	ReadCoord
	// ReadOrder is the coordinate, along a mesh dim, of each member of the
	// rank's group in id order: the order a collective takes their blocks
	// in, the identity on a mesh whose ids ascend.
	ReadOrder
)

// A RankRead is one rank-dependent fact a lowering read: the lowering
// takes the same decisions on two ranks of the same meshes for which
// every read it made answers alike (Of), and their programs then differ
// only in ring ids and start_index attrs. passes.PartitionClasses forms
// its classes so.
type RankRead struct {
	Kind ReadKind
	Mesh *ir.ProcessMesh // nil for ReadRank
	Axis int
}

// Of returns the read's answer on rank.
func (r RankRead) Of(rank int) (string, error) {
	switch r.Kind {
	case ReadRank:
		return strconv.Itoa(rank), nil
	case ReadCoord:
		c, err := r.Mesh.Coord(rank)
		if err != nil {
			return "", err
		}
		if r.Axis < 0 || r.Axis >= len(c) {
			return "", fmt.Errorf("mesh axis %d is out of range for mesh %s", r.Axis, r.Mesh.Name)
		}
		return strconv.Itoa(c[r.Axis]), nil
	case ReadOrder:
		ord, err := memberOrder(r.Mesh, r.Axis, rank)
		if err != nil {
			return "", err
		}
		var sb strings.Builder
		for i, c := range ord {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(strconv.Itoa(c))
		}
		return sb.String(), nil
	}
	return "", fmt.Errorf("unknown rank read kind %d", r.Kind)
}

func (r RankRead) String() string {
	switch r.Kind {
	case ReadRank:
		return "the rank"
	case ReadCoord:
		return fmt.Sprintf("its coordinate along mesh %s dim %d", r.Mesh.Name, r.Axis)
	case ReadOrder:
		return fmt.Sprintf("its group's member order along mesh %s dim %d", r.Mesh.Name, r.Axis)
	}
	return fmt.Sprintf("RankRead(%d)", r.Kind)
}

// memberOrder is, for the group of rank along axis of pm, the coordinate
// along axis of each member, members in id order.
func memberOrder(pm *ir.ProcessMesh, axis, rank int) ([]int, error) {
	g, err := pm.Group(axis, rank)
	if err != nil {
		return nil, err
	}
	ord := make([]int, len(g))
	for j, id := range g {
		c, err := pm.Coord(id)
		if err != nil {
			return nil, err
		}
		ord[j] = c[axis]
	}
	return ord, nil
}

// read records r in the rank's lowering, once.
func (st *state) read(r RankRead) {
	for _, x := range st.reads {
		if x == r {
			return
		}
	}
	st.reads = append(st.reads, r)
}
