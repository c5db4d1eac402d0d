package outboxsql

import "testing"

func TestDeliveryStatesReadAndWriteTheirNames(t *testing.T) {
	for _, s := range []DeliveryState{Pending, Skipped} {
		text, err := s.MarshalText()
		var back DeliveryState
		if err != nil || back.UnmarshalText(text) != nil || back != s {
			t.Fatalf("%v: %q, %v, read back %v", s, text, err, back)
		}
	}
	var s DeliveryState
	if err := s.UnmarshalText([]byte("published")); err == nil {
		t.Fatal("an unknown name was accepted")
	}
}
