package opdef

func controlDefs() []*Def {
	return nil // TODO(defs)
}
