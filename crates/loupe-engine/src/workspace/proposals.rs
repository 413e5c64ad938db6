//! The proposed texts of recently cut edit diffs, so their cursors continue without the text.

/// How many proposed texts an workspace keeps for cursors to continue, and their total size.
pub(crate) const PROPOSED_ENTRIES: usize = 8;
pub(crate) const PROPOSED_BYTES: usize = 8 << 20;

/// The proposed texts of recently cut diffs, keyed by their hash: a cut `diff_preview` with
/// `content` continues by a cursor that names the hash, so the caller never sends (and pays
/// for) the same content twice. Bounded in entries and bytes; the oldest goes first, and a
/// text over the byte bound is never kept (its continuation asks for it again).
/// A kept proposed text and its hash.
type HeldText = ([u8; 8], std::sync::Arc<Vec<u8>>);

#[derive(Debug, Default)]
pub(crate) struct ProposedTexts {
    entries: std::sync::Mutex<std::collections::VecDeque<HeldText>>,
}

impl ProposedTexts {
    pub(crate) fn keep(&self, hash: [u8; 8], bytes: &std::sync::Arc<Vec<u8>>) {
        if bytes.len() > PROPOSED_BYTES {
            return;
        }
        let Ok(mut entries) = self.entries.lock() else { return };
        entries.retain(|(held, _)| *held != hash);
        entries.push_back((hash, std::sync::Arc::clone(bytes)));
        let mut total: usize = entries.iter().map(|(_, bytes)| bytes.len()).sum();
        while entries.len() > PROPOSED_ENTRIES || total > PROPOSED_BYTES {
            let Some((_, gone)) = entries.pop_front() else { break };
            total -= gone.len();
        }
    }

    pub(crate) fn get(&self, hash: &[u8; 8]) -> Option<std::sync::Arc<Vec<u8>>> {
        let entries = self.entries.lock().ok()?;
        entries.iter().find(|(held, _)| held == hash).map(|(_, bytes)| std::sync::Arc::clone(bytes))
    }

    /// Marks a text as just used, so it is the last to go.
    pub(crate) fn touch(&self, hash: &[u8; 8]) {
        if let Some(bytes) = self.get(hash) {
            self.keep(*hash, &bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proposed_texts_stay_bounded() {
        let texts = ProposedTexts::default();
        for number in 0..20u8 {
            texts.keep([number; 8], &std::sync::Arc::new(vec![number; 10]));
        }
        assert!(texts.get(&[0; 8]).is_none());
        assert!(texts.get(&[19; 8]).is_some());
        assert_eq!(texts.entries.lock().unwrap().len(), PROPOSED_ENTRIES);
        texts.keep([99; 8], &std::sync::Arc::new(vec![0; PROPOSED_BYTES + 1]));
        assert!(texts.get(&[99; 8]).is_none());
        texts.keep([98; 8], &std::sync::Arc::new(vec![0; PROPOSED_BYTES - 5]));
        assert!(texts.get(&[98; 8]).is_some());
        assert!(texts.get(&[19; 8]).is_none(), "the byte bound evicts the oldest");
    }
}
