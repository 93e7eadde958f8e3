package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
)

// The blast server: a minimal MCP server over stdio that serves one event
// type, bench.event, and sends pre-formatted events as fast as its stdout
// takes them, so that the events benchmarks measure the client, not a
// server. The test binary becomes it when envBlast is set (see init).
//
// events/stream {name, arguments: {count}} acknowledges at once, then waits
// for the tool call "go" and sends count events of about 300 bytes, 5 %
// duplicates (every 20th repeats the one before), then a heartbeat. Their
// eventIds do not depend on the stream, so every stream sends the same
// frames.

const (
	envBlast   = "MCPRT_BENCH_BLAST"
	blastEvent = "bench.event"
)

func init() {
	if os.Getenv(envBlast) != "" {
		serveBlast(os.Stdin, os.Stdout)
		os.Exit(0)
	}
}

// blastFrame appends event number i of a stream whose request id is id
// (compact JSON).
func blastFrame(b []byte, i int, id []byte) []byte {
	n := i
	if i%20 == 19 {
		n = i - 1
	}
	b = append(b, `{"jsonrpc":"2.0","method":"notifications/events/event","params":{"eventId":"evt-`...)
	b = appendPadded(b, n)
	b = append(b, `","name":"`+blastEvent+`","timestamp":"2026-01-01T00:00:00.000Z","cursor":"cur-`...)
	b = appendPadded(b, i)
	b = append(b, `","data":{"path":"/tmp/demo/dir/file-`...)
	b = appendPadded(b, n%1000000)
	b = append(b, `.txt","op":"write","size":1234},"_meta":{"io.modelcontextprotocol/subscriptionId":`...)
	b = append(b, id...)
	return append(b, "}}}\n"...)
}

func appendPadded(b []byte, n int) []byte {
	s := strconv.Itoa(n)
	for range 9 - len(s) {
		b = append(b, '0')
	}
	return append(b, s...)
}

// uniqueEvents is how many distinct eventIds count events carry.
func uniqueEvents(count int) int { return count - count/20 }

type blastServer struct {
	mu  sync.Mutex // serialises writes to out
	out *bufio.Writer
	gos []chan struct{} // streams waiting for "go"
}

func (s *blastServer) write(line []byte) {
	s.mu.Lock()
	s.out.Write(line)
	s.out.WriteByte('\n')
	s.out.Flush()
	s.mu.Unlock()
}

func (s *blastServer) reply(id json.RawMessage, result string) {
	s.write([]byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + result + `}`))
}

func serveBlast(in io.Reader, out io.Writer) {
	s := &blastServer{out: bufio.NewWriterSize(out, 64<<10)}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var wg sync.WaitGroup
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string `json:"name"`
				Arguments struct {
					Count int `json:"count"`
				} `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || len(m.ID) == 0 {
			continue // notifications
		}
		switch m.Method {
		case "initialize":
			s.reply(m.ID, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"blast","version":"1"}}`)
		case "tools/list":
			s.reply(m.ID, `{"tools":[{"name":"go","description":"Starts the waiting event streams.","inputSchema":{"type":"object"}}]}`)
		case "tools/call":
			s.mu.Lock()
			gos := s.gos
			s.gos = nil
			s.mu.Unlock()
			for _, g := range gos {
				close(g)
			}
			s.reply(m.ID, `{"content":[{"type":"text","text":"go"}]}`)
		case "events/list":
			s.reply(m.ID, `{"events":[{"name":"`+blastEvent+`","delivery":["push"],"inputSchema":{"type":"object"}}]}`)
		case "events/stream":
			id := append([]byte(nil), m.ID...)
			g := make(chan struct{})
			s.mu.Lock()
			s.gos = append(s.gos, g)
			s.mu.Unlock()
			s.write([]byte(`{"jsonrpc":"2.0","method":"notifications/events/active","params":{"cursor":null,"_meta":{"io.modelcontextprotocol/subscriptionId":` + string(id) + `}}}`))
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-g
				s.blast(id, m.Params.Arguments.Count)
			}()
		default:
			s.write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32601,"message":"method not found"}}`))
		}
	}
}

// blast sends count events in chunks, each written under the lock.
func (s *blastServer) blast(id []byte, count int) {
	buf := make([]byte, 0, 64<<10)
	for i := 0; i < count; {
		buf = buf[:0]
		for ; i < count && len(buf) < 60<<10; i++ {
			buf = blastFrame(buf, i, id)
		}
		s.mu.Lock()
		s.out.Write(buf)
		s.out.Flush()
		s.mu.Unlock()
	}
	s.write([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/events/heartbeat","params":{"cursor":"cur-end","_meta":{"io.modelcontextprotocol/subscriptionId":%s}}}`, id)))
}
