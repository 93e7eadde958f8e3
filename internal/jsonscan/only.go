package jsonscan

// ObjectOnly is Object for a caller that refuses unknown members (as
// encoding/json's Decoder.DisallowUnknownFields does): it is also not sure
// when data has a top-level key that is not one of keys, so that the
// caller's encoding/json path reports it.
func ObjectOnly(data []byte, keys []string, vals [][]byte) bool {
	for i := range keys {
		vals[i] = nil
	}
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	end := object(data, i, 1, keys, vals, true)
	return end >= 0 && skipSpace(data, end) == len(data)
}

// Array scans raw, which must be exactly one JSON array starting at its
// first byte with nothing after it (as Object returns values), validating
// all of it, and appends each element's raw value (a subslice of raw,
// without surrounding space) to elems. It reports false, with elems
// unspecified, for anything else (null included) and for nesting deeper
// than MaxDepth.
func Array(raw []byte, elems [][]byte) ([][]byte, bool) {
	if len(raw) == 0 || raw[0] != '[' {
		return elems, false
	}
	i := skipSpace(raw, 1)
	if i < len(raw) && raw[i] == ']' {
		return elems, i+1 == len(raw)
	}
	for {
		end := value(raw, i, 1)
		if end < 0 {
			return elems, false
		}
		elems = append(elems, raw[i:end])
		var closed bool
		if i, closed = next(raw, end, ']'); closed {
			return elems, i == len(raw)
		}
	}
}
