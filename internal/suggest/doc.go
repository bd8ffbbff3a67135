// Package suggest finds the known names nearest a misspelt one, for
// "did you mean" messages (pass names, op types).
package suggest
