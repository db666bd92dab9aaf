#!/bin/bash
# mkinvalid.sh: regenerates the hand-made cases in invalid/ (each CASE.bin
# with the error it must produce in CASE.err).  Files added by the fuzzer
# are kept.  Run from anywhere; bash's printf does the byte escapes.
set -eu
cd "$(dirname "$0")/invalid"

# emit NAME ERROR BYTES...: BYTES are printf format strings.
emit() {
	local name=$1 err=$2
	shift 2
	: > "$name.bin"
	for part in "$@"; do printf "$part" >> "$name.bin"; done
	echo "$err" > "$name.err"
}

hdr='CW\x02\x00'		# magic + version 2 + flags 0
bye='\x00\x09'			# type BYE
# A valid BYE body {"reason": "done"} is 13 bytes.
bye_body='\x81\xa6reason\xa4done'

emit truncated-header	PROTO_E_TRUNCATED	'CW\x02\x00\x00'
emit truncated-body	PROTO_E_TRUNCATED	"$hdr$bye"'\x00\x00\x00\x0d' '\x81\xa6rea'
emit length-zero	PROTO_E_EMPTY		"$hdr$bye"'\x00\x00\x00\x00'
emit length-over-max	PROTO_E_TOOBIG		"$hdr$bye"'\x01\x00\x00\x01'
emit body-not-map	PROTO_E_NOTMAP		"$hdr$bye"'\x00\x00\x00\x02' '\x91\xc0'
emit array-2-32		PROTO_E_COUNT		"$hdr$bye"'\x00\x00\x00\x0d' '\x81\xa6reason\xdd\xff\xff\xff\xff' '\xc0'
emit map-2-32		PROTO_E_COUNT		"$hdr$bye"'\x00\x00\x00\x05' '\xdf\xff\xff\xff\xff'
emit invalid-utf8	PROTO_E_UTF8		"$hdr$bye"'\x00\x00\x00\x0b' '\x81\xa6reason\xa2\xc3\x28'
emit wrong-field-type	PROTO_E_FIELDTYPE	"$hdr$bye"'\x00\x00\x00\x09' '\x81\xa6reason\x2a'
emit unknown-type	PROTO_E_TYPE		'CW\x02\x00\x00\x63\x00\x00\x00\x01' '\x80'
emit version-mismatch	PROTO_E_VERSION		'CW\x01\x00' "$bye"'\x00\x00\x00\x0d' "$bye_body"
emit valid-then-garbage	PROTO_E_MAGIC		"$hdr$bye"'\x00\x00\x00\x0d' "$bye_body" 'garbage!garbage!'
emit missing-field	PROTO_E_MISSING		"$hdr"'\x00\x0a\x00\x00\x00\x01' '\x80'
emit duplicate-key	PROTO_E_DUPKEY		"$hdr$bye"'\x00\x00\x00\x11' '\x82\xa6reason\xc0\xa6reason\xc0'
emit key-not-string	PROTO_E_KEY		"$hdr$bye"'\x00\x00\x00\x03' '\x81\x01\x02'
emit bin-value		PROTO_E_BADBYTE		"$hdr$bye"'\x00\x00\x00\x0b' '\x81\xa6reason\xc4\x01x'
emit trailing-in-body	PROTO_E_TRAILING	"$hdr$bye"'\x00\x00\x00\x0e' "$bye_body" '\xc0'
emit flags-set		PROTO_E_FLAGS		'CW\x02\x01' "$bye"'\x00\x00\x00\x0d' "$bye_body"

# 1000 nested arrays inside {"reason": ...}: 8 + 1000 + 1 bytes of body.
nest=$(printf '\\x91%.0s' $(seq 1000))
emit nesting-1000	PROTO_E_DEPTH		"$hdr$bye"'\x00\x00\x03\xf1' '\x81\xa6reason' "$nest" '\xc0'
