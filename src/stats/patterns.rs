//! Units that contribute alike, grouped: what lets a bootstrap draw a multinomial over
//! patterns instead of drawing every unit (α's unit patterns, the query intervals).

/// Groups units by `keys` (one per unit, equal keys: units that contribute alike): the index of
/// each pattern's first unit and how many units share it, in order of first appearance; `None`
/// as soon as there are more than `max` patterns.
pub fn patterns_of<K: std::hash::Hash + Eq>(
    keys: impl Iterator<Item = K>,
    max: usize,
) -> Option<(Vec<usize>, Vec<u32>)> {
    let mut seen: std::collections::HashMap<K, u32, foldhash::fast::FixedState> =
        Default::default();
    let (mut first, mut multiplicity) = (Vec::new(), Vec::<u32>::new());
    for (u, key) in keys.enumerate() {
        let next = seen.len() as u32;
        let p = *seen.entry(key).or_insert(next);
        if p == next {
            if first.len() == max {
                return None;
            }
            first.push(u);
            multiplicity.push(0);
        }
        multiplicity[p as usize] += 1;
    }
    Some((first, multiplicity))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_of_counts_equal_keys_in_order_of_first_appearance() {
        let keys = ["b", "a", "b", "c", "a", "b"];
        let (first, multiplicity) = patterns_of(keys.iter(), 3).unwrap();
        assert_eq!((first, multiplicity), (vec![0, 1, 3], vec![3, 2, 1]));
        assert!(patterns_of(keys.iter(), 2).is_none(), "a third pattern");
        assert_eq!(
            patterns_of(std::iter::empty::<u8>(), 0),
            Some((vec![], vec![]))
        );
    }
}
