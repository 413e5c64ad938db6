package store

import (
	"fmt"
	"strings"

	yaml "gopkg.in/yaml.v3"
)

type Store struct {
	items map[string]Item
	count int
}

func (s *Store) Put(key string, item Item) (count int, err error) {
	key = strings.TrimSpace(key)
	if key == "" {
		return 0, fmt.Errorf("empty key for %v", item)
	}
	s.items[key] = item
	s.count++
	count = s.count
	return count, nil
}

func Load(data []byte, opts ...Option) (*Store, error) {
	var raw map[string]Item
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	store := &Store{items: map[string]Item{}, count: 0}
	for key, item := range raw {
		for _, opt := range opts {
			item = opt(item)
		}
		if _, err := store.Put(key, item); err != nil {
			return nil, err
		}
	}
	visit := func(key string) { fmt.Println(key, store.count) }
	visit("done")
	return store, nil
}
