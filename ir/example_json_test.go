package ir_test

import (
	"fmt"
	"math"
	"os"

	"github.com/distpass/distpass/ir"
)

func ExampleEncodeJSON() {
	m := ir.NewModule("tiny")
	b := ir.NewBuilder(m)
	b.Mesh("m", []int{2}, []string{"x"}, []int{0, 1})
	b.Param("w", ir.Tensor(ir.F32, 8, -1)).
		WithDist("m", 0, -1).
		WithPartial(0, ir.ReduceSum).
		WithFlags(ir.FlagTrainable)
	op := b.Op("scale", ir.Slots("X", "w"), ir.Slots("Out", "w"),
		ir.A("scale", ir.Float(math.Inf(1))),
		ir.A("axes", ir.Ints{}),
	).WithRole(ir.RoleBackward | ir.RoleLoss)
	b.Annotate(op, "default", 0)
	m.ParamGrads = []ir.ParamGrad{{Param: "w", Grad: "w@GRAD"}}

	data, err := ir.EncodeJSON(m)
	if err != nil {
		fmt.Println(err)
		return
	}
	os.Stdout.Write(data)

	back, err := ir.DecodeJSON(data)
	fmt.Println(ir.Equal(m, back), err)
	// Output:
	// {
	//   "version": 1,
	//   "name": "tiny",
	//   "meshes": [
	//     {"name": "m", "shape": [2], "dims": ["x"], "ranks": [0, 1]}
	//   ],
	//   "groups": [],
	//   "main": {
	//     "name": "main",
	//     "rank": -1,
	//     "blocks": [
	//       {
	//         "index": 0,
	//         "parent": -1,
	//         "forward": -1,
	//         "vars": [
	//           {
	//             "name": "w",
	//             "kind": "param",
	//             "type": {"kind": "tensor", "dtype": "f32", "shape": [8, -1]},
	//             "flags": ["trainable"],
	//             "dist": {
	//               "mesh": "m",
	//               "dims_mapping": [0, -1],
	//               "partial": [
	//                 {"dim": 0, "reduce": "sum"}
	//               ]
	//             }
	//           }
	//         ],
	//         "ops": [
	//           {
	//             "id": 1,
	//             "type": "scale",
	//             "inputs": [
	//               {"name": "X", "args": ["w"]}
	//             ],
	//             "outputs": [
	//               {"name": "Out", "args": ["w"]}
	//             ],
	//             "attrs": [
	//               {"name": "axes", "kind": "ints", "value": []},
	//               {"name": "scale", "kind": "float", "value": "inf"}
	//             ],
	//             "role": "backward|loss",
	//             "dist": {
	//               "mesh": "m",
	//               "impl_type": "default",
	//               "impl_index": 0,
	//               "recompute": false,
	//               "inputs": [
	//                 {"name": "w", "dims_mapping": [0, -1]}
	//               ],
	//               "outputs": [
	//                 {"name": "w", "dims_mapping": [0, -1]}
	//               ]
	//             }
	//           }
	//         ]
	//       }
	//     ]
	//   },
	//   "param_grads": [
	//     {"param": "w", "grad": "w@GRAD"}
	//   ]
	// }
	// true <nil>
}
