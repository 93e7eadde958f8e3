package tools

import (
	"encoding/base64"
	"fmt"
	"mime"
	"os"
	"path/filepath"
	"strings"
)

// saveBlob decodes base64 content (audio, a binary resource) into a file of
// its own, data.<ext> (mode 0600) in a new private temporary directory
// (mode 0700), so that the model can be pointed at it as at an image.
// Nothing removes it.
func saveBlob(data, mimeType string) (string, int, error) {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(data))
	if err != nil {
		if b, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(strings.TrimSpace(data), "=")); err != nil {
			return "", 0, fmt.Errorf("the content is not valid base64")
		}
	}
	dir, err := os.MkdirTemp("", "mcprt-blob-")
	if err != nil {
		return "", 0, fmt.Errorf("tools: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return "", 0, fmt.Errorf("tools: %w", err)
	}
	ext := ".bin"
	if exts, _ := mime.ExtensionsByType(mimeType); len(exts) > 0 {
		ext = exts[0]
	} else if _, sub, ok := strings.Cut(mimeType, "/"); ok && sub != "" && len(sub) <= 16 && !strings.ContainsAny(sub, `/\.;`) {
		ext = "." + sub
	}
	path := filepath.Join(dir, "data"+ext)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return "", 0, fmt.Errorf("tools: %w", err)
	}
	return path, len(b), nil
}
