#!/bin/sh
# expect_failure.sh REGEX COMMAND...: passes when COMMAND exits non-zero within 60 s and prints exactly
# one line matching the extended regular expression REGEX (on stdout or stderr).
regex=$1
shift
output=$(timeout 60 "$@" 2>&1)
status=$?
printf '%s\n' "$output"
if [ "$status" -eq 124 ]; then
  echo "expect_failure: command timed out (a hang)"
  exit 1
fi
if [ "$status" -eq 0 ]; then
  echo "expect_failure: command succeeded but should have failed"
  exit 1
fi
matches=$(printf '%s\n' "$output" | grep -cE -- "$regex")
if [ "$matches" -ne 1 ]; then
  echo "expect_failure: expected exactly one line matching '$regex', found $matches"
  exit 1
fi
echo "expect_failure: exit status $status and the expected message"
