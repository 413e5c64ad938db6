//! Posting-list encoding and sorted doc-id set algebra.
//!
//! A posting list is a strictly increasing run of doc ids stored as LEB128 varints: the first
//! id as is, every later one as `gap - 1`. Owns encoding, checked decoding (a corrupt list is an
//! error, never a panic or a wrong-but-plausible answer past what the checks can see) and the
//! intersection/union of sorted id vectors. Must not know where the bytes live.

/// A posting list did not decode to what its table entry promised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Corrupt;

/// Appends `value` as a LEB128 varint.
pub(crate) fn push_varint(out: &mut Vec<u8>, value: u32) {
    let mut buffer = [0u8; 5];
    let n = encode_varint(value, &mut buffer);
    out.extend_from_slice(&buffer[..n]);
}

/// Writes `value` as a LEB128 varint into `buffer`, returning its length.
pub(crate) fn encode_varint(mut value: u32, buffer: &mut [u8; 5]) -> usize {
    let mut n = 0;
    while value >= 0x80 {
        buffer[n] = (value as u8) | 0x80;
        value >>= 7;
        n += 1;
    }
    buffer[n] = value as u8;
    n + 1
}

/// Reads one varint at `*at`, advancing it. `None` on a truncated or over-long encoding.
pub(crate) fn read_varint(bytes: &[u8], at: &mut usize) -> Option<u32> {
    let mut value: u32 = 0;
    for shift in [0u32, 7, 14, 21, 28] {
        let byte = *bytes.get(*at)?;
        *at += 1;
        if shift == 28 && byte > 0x0F {
            return None;
        }
        value |= u32::from(byte & 0x7F) << shift;
        if byte < 0x80 {
            return Some(value);
        }
    }
    None
}

/// Appends the encoding of the sorted, distinct `docs` to `out`.
pub(crate) fn encode(docs: &[u32], out: &mut Vec<u8>) {
    let mut previous: Option<u32> = None;
    for &doc in docs {
        push_varint(out, delta(previous, doc));
        previous = Some(doc);
    }
}

/// The value stored for `doc` after `previous` (the first id is stored as is).
pub(crate) fn delta(previous: Option<u32>, doc: u32) -> u32 {
    match previous {
        None => doc,
        Some(previous) => doc - previous - 1,
    }
}

/// Decodes a list that must hold exactly `count` ids, all below `bound`, using every byte.
pub(crate) fn decode(bytes: &[u8], count: u32, bound: u32, out: &mut Vec<u32>) -> Result<(), Corrupt> {
    out.clear();
    // Every id takes at least one byte: a count beyond the bytes is a damaged list, refused
    // before anything is reserved for it (a file claiming 2^32 ids would otherwise reserve
    // 16 GiB).
    if count as usize > bytes.len() {
        return Err(Corrupt);
    }
    out.reserve(count as usize);
    let mut at = 0;
    let mut previous: Option<u32> = None;
    for _ in 0..count {
        let value = read_varint(bytes, &mut at).ok_or(Corrupt)?;
        let doc = match previous {
            None => value,
            Some(previous) => previous.checked_add(value).and_then(|d| d.checked_add(1)).ok_or(Corrupt)?,
        };
        if doc >= bound {
            return Err(Corrupt);
        }
        out.push(doc);
        previous = Some(doc);
    }
    if at == bytes.len() { Ok(()) } else { Err(Corrupt) }
}

/// Keeps in `docs` only the ids that the encoded list also holds, decoding it as it goes and
/// stopping once `docs` is exhausted. The list's own integrity was promised by its table entry;
/// what this walk can check (termination, overflow) it checks.
pub(crate) fn intersect_encoded(docs: &mut Vec<u32>, bytes: &[u8], count: u32) -> Result<(), Corrupt> {
    let mut kept = 0;
    let mut at = 0;
    let mut previous: Option<u32> = None;
    let mut remaining = count;
    let mut index = 0;
    'outer: while index < docs.len() {
        let wanted = docs[index];
        // Advance the list to the first id >= wanted.
        let current = loop {
            if let Some(current) = previous
                && current >= wanted
            {
                break current;
            }
            if remaining == 0 {
                break 'outer;
            }
            remaining -= 1;
            let value = read_varint(bytes, &mut at).ok_or(Corrupt)?;
            previous = Some(match previous {
                None => value,
                Some(p) => p.checked_add(value).and_then(|d| d.checked_add(1)).ok_or(Corrupt)?,
            });
        };
        if current == wanted {
            docs[kept] = wanted;
            kept += 1;
        }
        index += 1;
        // Skip ids of `docs` below the list's current id in one step.
        while index < docs.len() && docs[index] < current {
            index += 1;
        }
    }
    docs.truncate(kept);
    Ok(())
}

/// The intersection of two sorted, distinct id vectors.
pub(crate) fn intersect(left: &[u32], right: &[u32]) -> Vec<u32> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::with_capacity(left.len().min(right.len()));
    while i < left.len() && j < right.len() {
        match left[i].cmp(&right[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push(left[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out
}

/// The union of two sorted, distinct id vectors.
pub(crate) fn union(left: &[u32], right: &[u32]) -> Vec<u32> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::with_capacity(left.len() + right.len());
    while i < left.len() && j < right.len() {
        match left[i].cmp(&right[j]) {
            std::cmp::Ordering::Less => {
                out.push(left[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(right[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push(left[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&left[i..]);
    out.extend_from_slice(&right[j..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_at_the_edges() {
        for value in [0, 1, 127, 128, 16_383, 16_384, u32::MAX - 1, u32::MAX] {
            let mut bytes = Vec::new();
            push_varint(&mut bytes, value);
            let mut at = 0;
            assert_eq!(read_varint(&bytes, &mut at), Some(value));
            assert_eq!(at, bytes.len());
        }
        // Truncated and over-long encodings are refused.
        assert_eq!(read_varint(&[0x80], &mut 0), None);
        assert_eq!(read_varint(&[0xFF, 0xFF, 0xFF, 0xFF, 0x1F], &mut 0), None);
        assert_eq!(read_varint(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x01], &mut 0), None);
    }

    #[test]
    fn lists_round_trip_and_corruption_is_detected() {
        let docs = vec![0, 1, 2, 130, 131, 100_000, u32::MAX - 1];
        let mut bytes = Vec::new();
        encode(&docs, &mut bytes);
        let mut out = Vec::new();
        decode(&bytes, docs.len() as u32, u32::MAX, &mut out).unwrap();
        assert_eq!(out, docs);
        assert_eq!(decode(&bytes, docs.len() as u32 + 1, u32::MAX, &mut out), Err(Corrupt));
        assert_eq!(decode(&bytes, docs.len() as u32 - 1, u32::MAX, &mut out), Err(Corrupt));
        assert_eq!(decode(&bytes, docs.len() as u32, 100_000, &mut out), Err(Corrupt));
    }

    #[test]
    fn encoded_intersection_matches_plain_intersection() {
        let list: Vec<u32> = (0..500).map(|i| i * 3).collect();
        let mut bytes = Vec::new();
        encode(&list, &mut bytes);
        for step in [1u32, 2, 5, 7, 1000] {
            let mut docs: Vec<u32> = (0..1600).step_by(step as usize).collect();
            let expected = intersect(&docs, &list);
            intersect_encoded(&mut docs, &bytes, list.len() as u32).unwrap();
            assert_eq!(docs, expected, "step {step}");
        }
        assert_eq!(union(&[1, 3, 5], &[2, 3, 6]), vec![1, 2, 3, 5, 6]);
    }
}
