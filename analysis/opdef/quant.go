package opdef

func quantDefs() []*Def {
	return nil // TODO(defs)
}
