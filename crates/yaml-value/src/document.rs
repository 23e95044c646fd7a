//! Reading a text's YAML documents: the fast block reader when it can, the full parser else.

use crate::block;
use crate::yaml::{self, ParsedDoc, YamlError};

/// The documents of one span's text, with positions counted from `line_offset`. The fast reader
/// takes the plain block YAML that rendered manifests are; whatever it doesn't know goes to the
/// full parser.
pub fn read_documents(text: &str, line_offset: u32) -> (Vec<ParsedDoc>, Option<YamlError>) {
    match block::read_document(text, line_offset) {
        Some(doc) => (vec![doc], None),
        None => yaml::parse_stream_at(text, line_offset),
    }
}
