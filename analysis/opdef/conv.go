package opdef

func convDefs() []*Def {
	return nil // TODO(defs)
}
