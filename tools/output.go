package tools

import (
	"github.com/mcprt/mcprt/config"
)

// Output limits (seed 003), configurable in settings.output.
const (
	DefaultMaxTextBytes    = 24 << 10
	DefaultMaxLines        = 1000
	DefaultMaxDetailsBytes = 16 << 10
	// MaxImages is how many images one result passes through.
	MaxImages = 4
	// MaxImageBytes bounds one image passed through.
	MaxImageBytes = 4 << 20
)

// supportedImage are the image types passed through to the model.
var supportedImage = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// Image is an image a result passes to the model.
type Image struct {
	MimeType string `json:"mimeType"`
	// Data is base64, as the server sent it.
	Data string `json:"data"`
}

type outputLimits struct{ maxText, maxLines, maxDetails int }

func limitsFrom(o *config.OutputLimits) outputLimits {
	l := outputLimits{DefaultMaxTextBytes, DefaultMaxLines, DefaultMaxDetailsBytes}
	if o == nil {
		return l
	}
	if o.MaxTextBytes != nil && *o.MaxTextBytes > 0 {
		l.maxText = *o.MaxTextBytes
	}
	if o.MaxLines != nil && *o.MaxLines > 0 {
		l.maxLines = *o.MaxLines
	}
	if o.MaxDetailsBytes != nil && *o.MaxDetailsBytes > 0 {
		l.maxDetails = *o.MaxDetailsBytes
	}
	return l
}
