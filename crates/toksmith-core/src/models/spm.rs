//! SentencePiece `.model` files: a small protobuf reader for `ModelProto`.
//!
//! Only the fields the tokenizers need are kept (pieces, the trainer and normalizer specs); every
//! other field is skipped by wire type. Nothing is trusted: each length is checked against the
//! bytes that remain before anything is sliced or allocated, and an error names the byte offset.

use std::fmt;

/// A `.model` file that cannot be read; `offset` is the byte where reading failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpmError {
    pub offset: usize,
    pub message: String,
    /// the allocator refused the memory to hold what was read (`message` says what)
    pub out_of_memory: bool,
}

impl SpmError {
    fn at(offset: usize, message: impl Into<String>) -> Self {
        SpmError {
            offset,
            message: message.into(),
            out_of_memory: false,
        }
    }

    /// A refused allocation while reading the field at `offset`.
    fn refused(offset: usize, e: crate::Error) -> Self {
        // the message is moved, not formatted: the allocator has just refused memory, and a
        // new string could abort the process
        let message = match e {
            crate::Error::OutOfMemory(m) => m,
            other => other.to_string(),
        };
        SpmError {
            offset,
            message,
            out_of_memory: true,
        }
    }
}

impl fmt::Display for SpmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid SentencePiece model at byte offset {}: {}",
            self.offset, self.message
        )
    }
}

impl std::error::Error for SpmError {}

impl From<SpmError> for crate::Error {
    fn from(e: SpmError) -> Self {
        if e.out_of_memory {
            crate::Error::OutOfMemory(e.message)
        } else {
            crate::Error::InvalidVocab(e.to_string())
        }
    }
}

pub type SpmResult<T> = std::result::Result<T, SpmError>;

/// `ModelProto.SentencePiece.Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PieceType {
    Normal,
    Unknown,
    Control,
    UserDefined,
    Unused,
    Byte,
}

impl PieceType {
    fn from_wire(v: u64) -> Option<Self> {
        Some(match v {
            1 => PieceType::Normal,
            2 => PieceType::Unknown,
            3 => PieceType::Control,
            4 => PieceType::UserDefined,
            5 => PieceType::Unused,
            6 => PieceType::Byte,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Piece {
    pub piece: String,
    pub score: f32,
    pub kind: PieceType,
}

/// `TrainerSpec.ModelType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelType {
    Unigram,
    Bpe,
    Word,
    Char,
}

/// The trainer fields that change how a model encodes (defaults as in sentencepiece_model.proto).
#[derive(Debug, Clone, PartialEq)]
pub struct TrainerSpec {
    pub model_type: ModelType,
    pub vocab_size: i32,
    pub byte_fallback: bool,
    pub split_digits: bool,
    pub treat_whitespace_as_suffix: bool,
    pub allow_whitespace_only_pieces: bool,
    pub unk_id: i32,
    pub bos_id: i32,
    pub eos_id: i32,
    pub pad_id: i32,
    pub unk_piece: String,
    pub bos_piece: String,
    pub eos_piece: String,
    pub pad_piece: String,
    pub unk_surface: String,
}

impl Default for TrainerSpec {
    fn default() -> Self {
        TrainerSpec {
            model_type: ModelType::Unigram,
            vocab_size: 8000,
            byte_fallback: false,
            split_digits: false,
            treat_whitespace_as_suffix: false,
            allow_whitespace_only_pieces: false,
            unk_id: 0,
            bos_id: 1,
            eos_id: 2,
            pad_id: -1,
            unk_piece: "<unk>".into(),
            bos_piece: "<s>".into(),
            eos_piece: "</s>".into(),
            pad_piece: "<pad>".into(),
            unk_surface: " \u{2047} ".into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NormalizerSpec {
    pub name: String,
    pub precompiled_charsmap: Vec<u8>,
    pub add_dummy_prefix: bool,
    pub remove_extra_whitespaces: bool,
    pub escape_whitespaces: bool,
}

impl Default for NormalizerSpec {
    fn default() -> Self {
        NormalizerSpec {
            name: String::new(),
            precompiled_charsmap: Vec::new(),
            add_dummy_prefix: true,
            remove_extra_whitespaces: true,
            escape_whitespaces: true,
        }
    }
}

/// A parsed `.model` file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelProto {
    pub pieces: Vec<Piece>,
    pub trainer_spec: TrainerSpec,
    pub normalizer_spec: NormalizerSpec,
    /// Present only in some files (a denormalizer for decoding); kept for the readers.
    pub denormalizer_spec: Option<NormalizerSpec>,
}

/// Protobuf wire reader over one message; `base` is the message's offset in the file.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    base: usize,
}

enum Value<'a> {
    Varint(u64),
    Fixed64,
    Bytes(&'a [u8], usize),
    Fixed32(u32),
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8], base: usize) -> Self {
        Reader { buf, pos: 0, base }
    }

    fn err(&self, at: usize, message: impl Into<String>) -> SpmError {
        SpmError::at(self.base + at, message)
    }

    fn varint(&mut self) -> SpmResult<u64> {
        let start = self.pos;
        let mut v: u64 = 0;
        for i in 0..10 {
            let Some(&b) = self.buf.get(self.pos) else {
                return Err(self.err(start, "truncated varint"));
            };
            self.pos += 1;
            if i == 9 && b > 1 {
                return Err(self.err(start, "varint longer than 64 bits"));
            }
            v |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err(self.err(start, "varint longer than 10 bytes"))
    }

    /// The next field: (field number, value, offset of the field's key), or None at the end.
    fn next(&mut self) -> SpmResult<Option<(u64, Value<'a>, usize)>> {
        if self.pos >= self.buf.len() {
            return Ok(None);
        }
        let at = self.pos;
        let key = self.varint()?;
        let field = key >> 3;
        if field == 0 {
            return Err(self.err(at, "field number 0"));
        }
        let value = match key & 7 {
            0 => Value::Varint(self.varint()?),
            1 => {
                if self.buf.len() - self.pos < 8 {
                    return Err(self.err(at, "truncated 64-bit field"));
                }
                self.pos += 8;
                Value::Fixed64
            }
            2 => {
                let len_at = self.pos;
                let len = self.varint()?;
                let left = (self.buf.len() - self.pos) as u64;
                if len > left {
                    return Err(self.err(
                        len_at,
                        format!("field {field} claims {len} bytes but only {left} remain"),
                    ));
                }
                let start = self.pos;
                self.pos += len as usize;
                Value::Bytes(&self.buf[start..self.pos], self.base + start)
            }
            5 => {
                let Some(b) = self.buf.get(self.pos..self.pos + 4) else {
                    return Err(self.err(at, "truncated 32-bit field"));
                };
                self.pos += 4;
                Value::Fixed32(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            }
            w => return Err(self.err(at, format!("unsupported wire type {w} (field {field})"))),
        };
        Ok(Some((field, value, at)))
    }
}

fn want_varint(v: &Value, field: u64, at: usize, r: &Reader) -> SpmResult<u64> {
    match v {
        Value::Varint(x) => Ok(*x),
        _ => Err(r.err(at, format!("field {field}: expected a varint"))),
    }
}

fn want_string(v: &Value, field: u64, at: usize, r: &Reader) -> SpmResult<String> {
    match v {
        Value::Bytes(b, off) => {
            let s = std::str::from_utf8(b).map_err(|e| {
                SpmError::at(
                    off + e.valid_up_to(),
                    format!("field {field}: string is not valid UTF-8"),
                )
            })?;
            crate::mem::try_string(s, "the pieces of a SentencePiece model")
                .map_err(|e| SpmError::refused(*off, e))
        }
        _ => Err(r.err(at, format!("field {field}: expected a string"))),
    }
}

fn want_bytes<'a>(
    v: &Value<'a>,
    field: u64,
    at: usize,
    r: &Reader,
) -> SpmResult<(&'a [u8], usize)> {
    match v {
        Value::Bytes(b, off) => Ok((b, *off)),
        _ => Err(r.err(at, format!("field {field}: expected bytes"))),
    }
}

/// int32 fields are sign-extended to 64 bits on the wire.
fn as_i32(x: u64) -> i32 {
    x as i64 as i32
}

fn parse_piece(buf: &[u8], base: usize) -> SpmResult<Piece> {
    let mut r = Reader::new(buf, base);
    let mut p = Piece {
        piece: String::new(),
        score: 0.0,
        kind: PieceType::Normal,
    };
    while let Some((field, v, at)) = r.next()? {
        match field {
            1 => p.piece = want_string(&v, field, at, &r)?,
            2 => match v {
                Value::Fixed32(bits) => p.score = f32::from_bits(bits),
                _ => return Err(r.err(at, "piece score: expected a float")),
            },
            3 => {
                let t = want_varint(&v, field, at, &r)?;
                p.kind = PieceType::from_wire(t)
                    .ok_or_else(|| r.err(at, format!("unknown piece type {t}")))?;
            }
            _ => {}
        }
    }
    Ok(p)
}

fn parse_trainer(buf: &[u8], base: usize) -> SpmResult<TrainerSpec> {
    let mut r = Reader::new(buf, base);
    let mut t = TrainerSpec::default();
    while let Some((field, v, at)) = r.next()? {
        match field {
            3 => {
                let m = want_varint(&v, field, at, &r)?;
                t.model_type = match m {
                    1 => ModelType::Unigram,
                    2 => ModelType::Bpe,
                    3 => ModelType::Word,
                    4 => ModelType::Char,
                    _ => return Err(r.err(at, format!("unknown model_type {m}"))),
                };
            }
            4 => t.vocab_size = as_i32(want_varint(&v, field, at, &r)?),
            24 => t.treat_whitespace_as_suffix = want_varint(&v, field, at, &r)? != 0,
            25 => t.split_digits = want_varint(&v, field, at, &r)? != 0,
            26 => t.allow_whitespace_only_pieces = want_varint(&v, field, at, &r)? != 0,
            35 => t.byte_fallback = want_varint(&v, field, at, &r)? != 0,
            40 => t.unk_id = as_i32(want_varint(&v, field, at, &r)?),
            41 => t.bos_id = as_i32(want_varint(&v, field, at, &r)?),
            42 => t.eos_id = as_i32(want_varint(&v, field, at, &r)?),
            43 => t.pad_id = as_i32(want_varint(&v, field, at, &r)?),
            44 => t.unk_surface = want_string(&v, field, at, &r)?,
            45 => t.unk_piece = want_string(&v, field, at, &r)?,
            46 => t.bos_piece = want_string(&v, field, at, &r)?,
            47 => t.eos_piece = want_string(&v, field, at, &r)?,
            48 => t.pad_piece = want_string(&v, field, at, &r)?,
            _ => {}
        }
    }
    Ok(t)
}

fn parse_normalizer(buf: &[u8], base: usize) -> SpmResult<NormalizerSpec> {
    let mut r = Reader::new(buf, base);
    let mut n = NormalizerSpec::default();
    while let Some((field, v, at)) = r.next()? {
        match field {
            1 => n.name = want_string(&v, field, at, &r)?,
            2 => {
                let (b, off) = want_bytes(&v, field, at, &r)?;
                n.precompiled_charsmap =
                    crate::mem::try_bytes(b, "the normalization map of a SentencePiece model")
                        .map_err(|e| SpmError::refused(off, e))?;
            }
            3 => n.add_dummy_prefix = want_varint(&v, field, at, &r)? != 0,
            4 => n.remove_extra_whitespaces = want_varint(&v, field, at, &r)? != 0,
            5 => n.escape_whitespaces = want_varint(&v, field, at, &r)? != 0,
            _ => {}
        }
    }
    Ok(n)
}

impl ModelProto {
    /// Parse a serialized `ModelProto` (the content of a `.model` file).
    pub fn parse(buf: &[u8]) -> SpmResult<Self> {
        let mut r = Reader::new(buf, 0);
        let mut m = ModelProto::default();
        while let Some((field, v, at)) = r.next()? {
            match field {
                1 => {
                    let (b, off) = want_bytes(&v, field, at, &r)?;
                    let piece = parse_piece(b, off)?;
                    crate::mem::try_push(
                        &mut m.pieces,
                        piece,
                        "the pieces of a SentencePiece model",
                    )
                    .map_err(|e| SpmError::refused(off, e))?;
                }
                2 => {
                    let (b, off) = want_bytes(&v, field, at, &r)?;
                    m.trainer_spec = parse_trainer(b, off)?;
                }
                3 => {
                    let (b, off) = want_bytes(&v, field, at, &r)?;
                    m.normalizer_spec = parse_normalizer(b, off)?;
                }
                5 => {
                    let (b, off) = want_bytes(&v, field, at, &r)?;
                    m.denormalizer_spec = Some(parse_normalizer(b, off)?);
                }
                _ => {}
            }
        }
        if m.pieces.is_empty() {
            return Err(SpmError::at(
                buf.len(),
                "no pieces (not a SentencePiece model)",
            ));
        }
        m.check()?;
        Ok(m)
    }

    /// The consistency sentencepiece itself insists on when it loads a model.
    fn check(&self) -> SpmResult<()> {
        let end = |message: String| SpmError::at(0, message);
        let mut seen = rustc_hash::FxHashSet::default();
        crate::mem::try_reserve_set(
            &mut seen,
            self.pieces.len(),
            "the pieces of a SentencePiece model",
        )
        .map_err(|e| SpmError::refused(0, e))?;
        let mut unk = None;
        for (i, p) in self.pieces.iter().enumerate() {
            if p.piece.is_empty() {
                return Err(end(format!("piece {i} is empty")));
            }
            if !seen.insert(p.piece.as_str()) {
                return Err(end(format!("piece {:?} appears twice (id {i})", p.piece)));
            }
            match p.kind {
                PieceType::Unknown => {
                    if unk.is_some() {
                        return Err(end("more than one unknown piece".into()));
                    }
                    unk = Some(i);
                }
                PieceType::Byte => {
                    if !self.trainer_spec.byte_fallback {
                        return Err(end(format!(
                            "byte piece {:?} in a model without byte_fallback",
                            p.piece
                        )));
                    }
                    if byte_piece_value(&p.piece).is_none() {
                        return Err(end(format!("byte piece {:?} is not <0xXX>", p.piece)));
                    }
                }
                _ => {}
            }
        }
        if unk.is_none() {
            return Err(end("no unknown piece (type UNKNOWN)".into()));
        }
        Ok(())
    }

    /// Id of the unknown piece (a checked model has exactly one).
    pub fn unk_id(&self) -> u32 {
        self.pieces
            .iter()
            .position(|p| p.kind == PieceType::Unknown)
            .unwrap_or(0) as u32
    }
}

/// `<0xAB>` -> 0xAB (the spelling of byte pieces, upper-case hex as sentencepiece writes it).
pub fn byte_piece_value(piece: &str) -> Option<u8> {
    let b = piece.as_bytes();
    if b.len() == 6 && b.starts_with(b"<0x") && b[5] == b'>' {
        let hex = &piece[3..5];
        if hex.bytes().all(|c| c.is_ascii_hexdigit()) {
            return u8::from_str_radix(hex, 16).ok();
        }
    }
    None
}

/// 0xAB -> `<0xAB>`.
pub fn byte_piece(b: u8) -> String {
    format!("<0x{b:02X}>")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn varint(mut v: u64, out: &mut Vec<u8>) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(b);
                break;
            }
            out.push(b | 0x80);
        }
    }

    fn field_bytes(field: u64, data: &[u8], out: &mut Vec<u8>) {
        varint(field << 3 | 2, out);
        varint(data.len() as u64, out);
        out.extend_from_slice(data);
    }

    fn piece(s: &str, score: f32, kind: u64) -> Vec<u8> {
        let mut p = Vec::new();
        field_bytes(1, s.as_bytes(), &mut p);
        varint(2 << 3 | 5, &mut p);
        p.extend_from_slice(&score.to_le_bytes());
        varint(3 << 3, &mut p);
        varint(kind, &mut p);
        p
    }

    fn small_model() -> Vec<u8> {
        small_model_fields().concat()
    }

    /// The top-level fields of a small model, one per element.
    fn small_model_fields() -> Vec<Vec<u8>> {
        let mut fields = Vec::new();
        let mut m = Vec::new();
        field_bytes(1, &piece("<unk>", 0.0, 2), &mut m);
        fields.push(std::mem::take(&mut m));
        field_bytes(1, &piece("<s>", 0.0, 3), &mut m);
        fields.push(std::mem::take(&mut m));
        field_bytes(1, &piece("a", -1.5, 1), &mut m);
        fields.push(std::mem::take(&mut m));
        let mut t = Vec::new();
        varint(3 << 3, &mut t);
        varint(2, &mut t);
        varint(43 << 3, &mut t);
        varint(-1i64 as u64, &mut t); // pad_id = -1 on 10 bytes
        field_bytes(2, &t, &mut m);
        fields.push(std::mem::take(&mut m));
        let mut n = Vec::new();
        field_bytes(1, b"identity", &mut n);
        varint(3 << 3, &mut n);
        varint(0, &mut n);
        field_bytes(3, &n, &mut m);
        fields.push(m);
        fields
    }

    #[test]
    fn parses_fields_and_defaults() {
        let m = ModelProto::parse(&small_model()).unwrap();
        assert_eq!(m.pieces.len(), 3);
        assert_eq!(m.pieces[2].piece, "a");
        assert_eq!(m.pieces[2].score, -1.5);
        assert_eq!(m.pieces[1].kind, PieceType::Control);
        assert_eq!(m.trainer_spec.model_type, ModelType::Bpe);
        assert_eq!(m.trainer_spec.pad_id, -1);
        assert_eq!(m.trainer_spec.unk_id, 0);
        assert_eq!(m.normalizer_spec.name, "identity");
        assert!(!m.normalizer_spec.add_dummy_prefix);
        assert!(m.normalizer_spec.remove_extra_whitespaces);
        assert_eq!(m.unk_id(), 0);
    }

    #[test]
    fn every_truncation_is_an_error_with_an_offset() {
        // A cut between two top-level fields is a shorter valid message (protobuf has no end
        // marker); a cut anywhere else must be refused, naming an offset before the cut.
        let fields = small_model_fields();
        let full = fields.concat();
        let boundaries: Vec<usize> = fields
            .iter()
            .scan(0, |acc, f| {
                *acc += f.len();
                Some(*acc)
            })
            .collect();
        let mut refused = 0;
        for cut in 0..full.len() {
            match ModelProto::parse(&full[..cut]) {
                Ok(_) => assert!(boundaries.contains(&cut), "cut {cut} parsed"),
                Err(e) => {
                    assert!(e.offset <= cut, "offset {} past the cut {cut}", e.offset);
                    assert!(e.to_string().contains("byte offset"));
                    refused += 1;
                }
            }
        }
        assert!(refused >= full.len() - boundaries.len());
    }

    #[test]
    fn huge_length_is_refused_before_allocating() {
        let mut m = Vec::new();
        varint(1 << 3 | 2, &mut m);
        varint(u64::MAX >> 1, &mut m);
        let e = ModelProto::parse(&m).unwrap_err();
        assert_eq!(e.offset, 1);
        assert!(e.message.contains("remain"), "{}", e.message);
    }

    #[test]
    fn bad_values_are_errors() {
        // wire type 3 (groups) is not supported
        let e = ModelProto::parse(&[0x0b]).unwrap_err();
        assert_eq!(e.offset, 0);
        // an over-long varint
        let e = ModelProto::parse(&[
            0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f,
        ])
        .unwrap_err();
        assert_eq!(e.offset, 1);
        // duplicate pieces
        let mut m = Vec::new();
        field_bytes(1, &piece("<unk>", 0.0, 2), &mut m);
        field_bytes(1, &piece("a", 0.0, 1), &mut m);
        field_bytes(1, &piece("a", 0.0, 1), &mut m);
        assert!(ModelProto::parse(&m).unwrap_err().message.contains("twice"));
        // a byte piece without byte_fallback
        let mut m = Vec::new();
        field_bytes(1, &piece("<unk>", 0.0, 2), &mut m);
        field_bytes(1, &piece("<0x41>", 0.0, 6), &mut m);
        assert!(ModelProto::parse(&m)
            .unwrap_err()
            .message
            .contains("byte_fallback"));
        // invalid UTF-8 in a piece names the bad byte
        let mut m = Vec::new();
        let mut p = Vec::new();
        field_bytes(1, b"a\xffb", &mut p);
        field_bytes(1, &p, &mut m);
        let e = ModelProto::parse(&m).unwrap_err();
        assert_eq!(e.offset, 2 + 2 + 1);
    }

    #[test]
    fn byte_pieces() {
        assert_eq!(byte_piece(0xab), "<0xAB>");
        assert_eq!(byte_piece_value("<0xAB>"), Some(0xab));
        assert_eq!(byte_piece_value("<0x0a>"), Some(0x0a));
        assert_eq!(byte_piece_value("<0xG1>"), None);
        assert_eq!(byte_piece_value("<0x1>"), None);
    }
}
