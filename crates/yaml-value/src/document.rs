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

/// The documents of a text as go-yaml v2 reads them (Helm's values files): the fast reader's
/// [`block::read_document_go_yaml_v2`] when it takes the text as one document, else the full
/// parser's [`yaml::parse_stream_go_yaml_v2`].
pub fn read_documents_go_yaml_v2(text: &str) -> (Vec<ParsedDoc>, Option<YamlError>) {
    match block::read_document_go_yaml_v2(text, 0) {
        Some(doc) => (vec![doc], None),
        None => yaml::parse_stream_go_yaml_v2(text),
    }
}
