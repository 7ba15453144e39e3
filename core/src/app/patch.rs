//! `Patch<T>`: what a PATCH says about one field — leave it, clear it, or set it.

/// One field of a partial update: absent (keep), `null` (clear), or a value (set).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Patch<T> {
    /// The field was not given: keep the stored value.
    #[default]
    Keep,
    /// The field was given as `null`: clear the stored value.
    Clear,
    /// The field was given: store this value.
    Set(T),
}

impl<T> Patch<T> {
    /// Whether the field was given at all.
    pub fn is_given(&self) -> bool {
        !matches!(self, Patch::Keep)
    }

    /// The value it sets, if it sets one.
    pub fn as_set(&self) -> Option<&T> {
        match self {
            Patch::Set(value) => Some(value),
            Patch::Keep | Patch::Clear => None,
        }
    }

    /// Applies the patch to an optional stored value.
    pub fn apply_to(self, stored: &mut Option<T>) {
        match self {
            Patch::Keep => {}
            Patch::Clear => *stored = None,
            Patch::Set(value) => *stored = Some(value),
        }
    }

    /// The patch with its value mapped.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Patch<U> {
        match self {
            Patch::Keep => Patch::Keep,
            Patch::Clear => Patch::Clear,
            Patch::Set(value) => Patch::Set(f(value)),
        }
    }
}

impl<T> From<Option<Option<T>>> for Patch<T> {
    /// `None` = keep, `Some(None)` = clear, `Some(Some(v))` = set.
    fn from(value: Option<Option<T>>) -> Self {
        match value {
            None => Patch::Keep,
            Some(None) => Patch::Clear,
            Some(Some(v)) => Patch::Set(v),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn applies_each_of_the_three_states() {
        let mut stored = Some(1);
        Patch::Keep.apply_to(&mut stored);
        assert_eq!(stored, Some(1));
        Patch::Set(2).apply_to(&mut stored);
        assert_eq!(stored, Some(2));
        Patch::<i32>::Clear.apply_to(&mut stored);
        assert_eq!(stored, None);
        assert_eq!(Patch::from(Some(Some(3))).map(|v| v * 2), Patch::Set(6));
        assert!(!Patch::<i32>::from(None).is_given());
    }
}
