package memory

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Salvaged is what could still be read from a damaged store file.
type Salvaged struct {
	File     string                       `json:"file"`
	Records  map[string][]json.RawMessage `json:"records"`  // bucket → records, oldest first
	Problems []string                     `json:"problems"` // what could not be read, and where
}

// Salvage reads every record it still can from the (damaged) store file at
// path without changing it: each record bucket is read forwards until a
// damaged page, then backwards from its end, so records on both sides of the
// damage survive. The graph cache is not salvaged (it is rebuilt).
func Salvage(path string) (*Salvaged, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("salvage %s: %w", path, err)
	}
	out := &Salvaged{File: path, Records: map[string][]json.RawMessage{}}
	var db *bolt.DB
	err := guard(path, func() error {
		var err error
		db, err = bolt.Open(path, 0o444, &bolt.Options{ReadOnly: true, Timeout: time.Second})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("salvage %s: nothing readable: %w", path, err)
	}
	defer db.Close()
	for _, name := range recordBuckets {
		recs, problems := salvageBucket(path, db, name)
		out.Records[name] = recs
		out.Problems = append(out.Problems, problems...)
	}
	return out, nil
}

// salvageBucket reads bucket name forwards, then backwards from the end up
// to where the forward pass stopped.
func salvageBucket(path string, db *bolt.DB, name string) ([]json.RawMessage, []string) {
	type rec struct {
		key string
		val json.RawMessage
	}
	var fwd, back []rec
	var problems []string
	keep := func(list *[]rec, k, v []byte) {
		if !json.Valid(v) {
			problems = append(problems, fmt.Sprintf("%s record %x: not valid JSON (garbled)", name, k))
			return
		}
		*list = append(*list, rec{string(k), append(json.RawMessage(nil), v...)})
	}
	complete := false
	err := guard(path, func() error {
		return db.View(func(tx *bolt.Tx) error {
			b := tx.Bucket([]byte(name))
			if b == nil {
				complete = true
				return nil
			}
			c := b.Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				keep(&fwd, k, v)
			}
			complete = true
			return nil
		})
	})
	if err != nil {
		problems = append(problems, fmt.Sprintf("%s: reading forwards stopped after %d records: %v", name, len(fwd), err))
	}
	if !complete {
		last := ""
		if len(fwd) > 0 {
			last = fwd[len(fwd)-1].key
		}
		err := guard(path, func() error {
			return db.View(func(tx *bolt.Tx) error {
				c := tx.Bucket([]byte(name)).Cursor()
				for k, v := c.Last(); k != nil && string(k) > last; k, v = c.Prev() {
					keep(&back, k, v)
				}
				return nil
			})
		})
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: reading backwards stopped after %d records: %v", name, len(back), err))
		}
	}
	out := make([]json.RawMessage, 0, len(fwd)+len(back))
	for _, r := range fwd {
		out = append(out, r.val)
	}
	for i := len(back) - 1; i >= 0; i-- {
		out = append(out, back[i].val)
	}
	return out, problems
}
