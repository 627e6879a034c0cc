//! Cube size: the two cubes the crate models, 2x2x2 and 3x3x3.
//!
//! Level: bottom of `cube`; depends only on `std` and `serde`, never on the other `cube`
//! files, so moves, stickers and pieces can all name a size.

use std::fmt;

/// Cube size. In JSON (journals, `--json`) it is its edge length, `2` or `3`; the names
/// `"Two"` and `"Three"` that older journals hold are read too.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Size {
    /// 2x2x2, 24 stickers.
    Two,
    /// 3x3x3, 54 stickers.
    Three,
}

impl Size {
    /// Edge length in cubies.
    pub fn n(self) -> usize {
        match self {
            Size::Two => 2,
            Size::Three => 3,
        }
    }

    pub fn stickers(self) -> usize {
        6 * self.n() * self.n()
    }

    pub fn per_face(self) -> usize {
        self.n() * self.n()
    }

    pub fn from_n(n: usize) -> Option<Size> {
        match n {
            2 => Some(Size::Two),
            3 => Some(Size::Three),
            _ => None,
        }
    }

    pub fn from_stickers(count: usize) -> Option<Size> {
        match count {
            24 => Some(Size::Two),
            54 => Some(Size::Three),
            _ => None,
        }
    }
}

impl serde::Serialize for Size {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u8(self.n() as u8)
    }
}

impl<'de> serde::Deserialize<'de> for Size {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Size, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Named {
            N(u64),
            Name(String),
        }
        let size = match Named::deserialize(d)? {
            Named::N(n) => usize::try_from(n).ok().and_then(Size::from_n),
            Named::Name(s) => match s.as_str() {
                "Two" | "2" => Some(Size::Two),
                "Three" | "3" => Some(Size::Three),
                _ => None,
            },
        };
        size.ok_or_else(|| serde::de::Error::custom("a cube size is 2 or 3"))
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.n();
        write!(f, "{n}x{n}x{n}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_size_is_its_edge_length_in_json_and_old_names_still_read() {
        assert_eq!(serde_json::to_string(&Size::Three).unwrap(), "3");
        assert_eq!(serde_json::to_string(&Size::Two).unwrap(), "2");
        for (text, size) in [
            ("3", Size::Three),
            ("2", Size::Two),
            ("\"Three\"", Size::Three),
            ("\"Two\"", Size::Two),
        ] {
            assert_eq!(serde_json::from_str::<Size>(text).unwrap(), size, "{text}");
        }
        assert!(serde_json::from_str::<Size>("4").is_err());
        assert!(serde_json::from_str::<Size>("\"Four\"").is_err());
    }
}
