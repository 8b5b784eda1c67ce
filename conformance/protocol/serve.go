package protocol

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
)

// Serve speaks the adapter protocol (PROTOCOL.md) for impl: it reads request
// lines from r until EOF and writes one answer line per request to w, in
// order. Output is buffered and flushed whenever every request read so far
// has been answered and no more input is buffered, so a pipelining runner
// gets whole batches per write.
//
// A line that is not a JSON request is answered with an
// "validation.invalid_request" error carrying the line's id, or id 0 when
// even that is unreadable: missing, out of the range 1..[MaxID], or given
// twice. An error from impl.Do is answered the same way.
// Request lines of any length are accepted (PROTOCOL.md section 1 lets an
// adapter accept lines above 1 MiB; the runner never sends them), so a
// caller that reads untrusted input should bound r itself.
// Serve returns nil at EOF, or the first read or write error.
func Serve(ctx context.Context, impl Implementation, r io.Reader, w io.Writer) error {
	br := bufio.NewReaderSize(r, 64<<10)
	bw := bufio.NewWriterSize(w, 64<<10)
	out := make([]byte, 0, 512)
	var long []byte
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, line...)
			continue
		}
		if long != nil {
			line = append(long, line...)
			long = nil
		}
		if len(line) > 0 && !(len(line) == 1 && line[0] == '\n') {
			out = serveLine(ctx, impl, line, out[:0])
			out = append(out, '\n')
			if _, werr := bw.Write(out); werr != nil {
				return werr
			}
		}
		if err != nil {
			if ferr := bw.Flush(); ferr != nil {
				return ferr
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if br.Buffered() == 0 {
			if err := bw.Flush(); err != nil {
				return err
			}
		}
	}
}

func serveLine(ctx context.Context, impl Implementation, line, out []byte) []byte {
	var req Request
	if err := req.UnmarshalJSON(line); err != nil {
		resp := Response{ID: recoverID(line), Error: &ErrorResult{Type: ErrorInvalidRequest, Message: err.Error()}}
		return resp.AppendJSON(out)
	}
	if req.Op == OpHello {
		h, err := impl.Hello(ctx)
		if err != nil {
			resp := Response{ID: req.ID, Error: &ErrorResult{Type: ErrorInvalidRequest, Message: err.Error()}}
			return resp.AppendJSON(out)
		}
		b, err := json.Marshal(struct {
			ID int64 `json:"id"`
			Hello
		}{req.ID, h})
		if err != nil {
			resp := Response{ID: req.ID, Error: &ErrorResult{Type: ErrorInvalidRequest, Message: err.Error()}}
			return resp.AppendJSON(out)
		}
		return append(out, b...)
	}
	resp, err := impl.Do(ctx, req)
	if err != nil {
		resp = Response{Error: &ErrorResult{Type: ErrorInvalidRequest, Message: err.Error()}}
	}
	resp.ID = req.ID
	return resp.AppendJSON(out)
}

// recoverID returns the id of a request line that could not be read
// otherwise, for the error answer: the id when the line is a JSON object
// with exactly one id field holding an integer in 1..MaxID, else 0 (the
// id that no request uses, PROTOCOL.md 3.9). An id given twice or out of
// range is not guessed at.
func recoverID(line []byte) int64 {
	var idOnly struct {
		ID *int64 `json:"id"`
	}
	if json.Unmarshal(line, &idOnly) != nil || idOnly.ID == nil || *idOnly.ID < 1 || *idOnly.ID > MaxID {
		return 0
	}
	if _, dup := duplicateKey(line); dup {
		return 0
	}
	return *idOnly.ID
}
