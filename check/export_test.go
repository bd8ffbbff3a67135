package check

// ConvBNReluDP is convBNReluDP, for the external tests.
var ConvBNReluDP = convBNReluDP
