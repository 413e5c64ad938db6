//! The bound on a message's JSON values, checked on its bytes before it is parsed: a JSON value
//! costs about thirty times its bytes once parsed, so a 60 MB line of a million small objects
//! (an `edits` array of 10^6 entries) took 1.9 GB before any tool could refuse it. Both
//! transports count a message's values with this byte scan first, and refuse one over the bound
//! with the request's id, read without building the values.

use serde::Deserialize;
use serde_json::Value;

/// The most JSON values one message may hold: a legitimate call holds a few thousand (1,000
/// edits of a dozen fields each), far below it.
pub(crate) const MAX_JSON_VALUES: usize = 100_000;

/// Whether `bytes` (one JSON text) holds more than `limit` values, counted as the containers
/// opened and the commas between items, outside strings. Linear in the bytes; no allocation.
pub(crate) fn holds_more_values_than(bytes: &[u8], limit: usize) -> bool {
    let (mut count, mut in_string, mut escaped) = (0usize, false, false);
    for &byte in bytes {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' | b',' => {
                count += 1;
                if count > limit {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// The message's `id`, read without building its other values (serde skips them).
pub(crate) fn request_id(bytes: &[u8]) -> Option<Value> {
    #[derive(Deserialize)]
    struct IdOnly {
        #[serde(default)]
        id: Option<Value>,
    }
    serde_json::from_slice::<IdOnly>(bytes).ok()?.id.filter(|id| id.is_string() || id.is_i64() || id.is_u64())
}

/// The refusal's message.
pub(crate) fn too_many_values_message() -> String {
    format!(
        "Invalid Request: the message holds more than {MAX_JSON_VALUES} JSON values; send fewer items per call \
         (`edits` takes at most 1000)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_counted_outside_strings_only() {
        assert!(!holds_more_values_than(br#"{"a":[1,2,3]}"#, 5));
        assert!(holds_more_values_than(br#"{"a":[1,2,3,4,5]}"#, 5));
        // Brackets and commas inside strings, escaped quotes included, are text.
        assert!(!holds_more_values_than(br#"{"a":"[[[,,,{{{\"[[[,,,"}"#, 2));
        let edits: String =
            (0..1000).map(|n| format!(r#"{{"path":"f{n}","operation":"delete"}}"#)).collect::<Vec<_>>().join(",");
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"edit","arguments":{{"edits":[{edits}]}}}}}}"#
        );
        assert!(!holds_more_values_than(call.as_bytes(), MAX_JSON_VALUES));
        assert_eq!(request_id(call.as_bytes()), Some(Value::from(7)));
    }
}
