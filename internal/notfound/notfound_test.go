package notfound

import (
	"errors"
	"fmt"
	"testing"
)

func TestIs(t *testing.T) {
	answer := errors.New("NoSuchEntity: not there")
	nf := &Error{What: "IAM role r", Err: answer}
	if !Is(nf) || !Is(fmt.Errorf("iam:GetRole r: %w", nf)) {
		t.Fatal("an Error, wrapped or not, is not found")
	}
	if !errors.Is(nf, answer) || nf.Error() != "IAM role r does not exist: NoSuchEntity: not there" {
		t.Fatalf("Error %q does not keep the answer", nf)
	}
	for _, err := range []error{nil, answer, fmt.Errorf("x: %w", answer)} {
		if Is(err) {
			t.Errorf("%v taken for not found", err)
		}
	}
}

func TestWhen(t *testing.T) {
	answer := errors.New("typed")
	typed := func(err error) bool { return err == answer }
	if err := When("thing", answer, typed); !Is(err) || !errors.Is(err, answer) {
		t.Fatalf("a recognised answer: %v", err)
	}
	other := errors.New("denied")
	if err := When("thing", other, typed); err != other {
		t.Fatalf("another error must come back as it is: %v", err)
	}
	if err := When("thing", nil, func(error) bool { return true }); err != nil {
		t.Fatalf("nil: %v", err)
	}
}
