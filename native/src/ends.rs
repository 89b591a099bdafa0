//! The ends of a merged template settled once for all its queries (HAMLET §3.1, Figure 3(b)): the queries
//! of one graph that differ only in their end type each keep their own finals (`Graph::end_slot`), but an
//! event at any of their end positions adds the same thing, the running totals of the positions before the
//! end. On the authors' shape a merged template has about four ends, one event of each type between two
//! changes of those totals, so four additions of numbers of thousands of digits per change become one.
//!
//! The ends that wait (`Partition::ends`: position, class, how many events) are settled when a running
//! total they read is about to change. Where every position of a group waits m times or more in a class,
//! m times the totals go once into the group's common total of that class, and each position's own count
//! drops by m; the rest is settled per position as before. A slot's final is its own total plus, per group,
//! the common total times how many of the group's positions add to the slot.

/// The `final_only` end positions of a graph grouped by their predecessor positions.
#[derive(Clone, Default)]
pub struct EndGroups {
    pub of: Vec<usize>,                // per position: its group, or usize::MAX
    pub positions: Vec<Vec<usize>>,    // per group: its positions
    pub slots: Vec<Vec<(usize, u64)>>, // per end slot: (group, how many of the group's positions add to it)
    read: Vec<bool>,                   // per position: some `final_only` position reads its running total
}

impl EndGroups {
    /// The groups of two or more `final_only` positions with the same `predecessors`; `end_slot` per
    /// position, `slots` in all.
    pub fn new(final_only: &[bool], predecessors: &[Vec<usize>], end_slot: &[usize], slots: usize) -> EndGroups {
        let mut groups = EndGroups {
            of: vec![usize::MAX; final_only.len()],
            positions: Vec::new(),
            slots: vec![Vec::new(); slots],
            read: vec![false; final_only.len()],
        };
        let mut candidates: Vec<Vec<usize>> = Vec::new();
        for p in (0..final_only.len()).filter(|&p| final_only[p]) {
            predecessors[p].iter().for_each(|&s| groups.read[s] = true);
            match candidates.iter_mut().find(|g| predecessors[g[0]] == predecessors[p]) {
                Some(group) => group.push(p),
                None => candidates.push(vec![p]),
            }
        }
        for positions in candidates.into_iter().filter(|g| g.len() > 1) {
            let g = groups.positions.len();
            for &p in &positions {
                groups.of[p] = g;
                let into = &mut groups.slots[end_slot[p]];
                match into.iter_mut().find(|(group, _)| *group == g) {
                    Some((_, times)) => *times += 1,
                    None => into.push((g, 1)),
                }
            }
            groups.positions.push(positions);
        }
        groups
    }

    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// Whether a change of `position`'s running total settles waiting ends: on the authors' shape a start
    /// event's does not (the ends read the Kleene position alone), and most events that feed totals are
    /// starts.
    pub fn read(&self, position: usize) -> bool {
        self.read.get(position).copied().unwrap_or(false)
    }

    /// Per (group, class) among `ends` (those `settles` picks): the least count, if every position of the
    /// group waits in that class.
    pub fn common(
        &self,
        ends: &[(usize, usize, u64)],
        settles: impl Fn(usize, usize) -> bool,
    ) -> Vec<(usize, usize, u64)> {
        // (group, class, positions waiting, least count)
        let mut tally: smallvec::SmallVec<[(usize, usize, usize, u64); 4]> = smallvec::SmallVec::new();
        for &(position, c, n) in ends {
            let g = self.of[position];
            if g == usize::MAX || n == 0 || !settles(position, c) {
                continue;
            }
            match tally.iter_mut().find(|t| t.0 == g && t.1 == c) {
                Some(t) => {
                    t.2 += 1;
                    t.3 = t.3.min(n);
                }
                None => tally.push((g, c, 1, n)),
            }
        }
        tally
            .into_iter()
            .filter(|&(g, _, waiting, _)| waiting == self.positions[g].len())
            .map(|(g, c, _, m)| (g, c, m))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_ends_with_the_same_predecessors_and_counts_their_slots() {
        // positions 0 start, 1 Kleene, 2..5 ends: 2, 3 and 4 after 1 (4 shares slot 1 with 3), 5 after 0
        let final_only = [false, false, true, true, true, true];
        let predecessors = vec![vec![], vec![0, 1], vec![1], vec![1], vec![1], vec![0]];
        let groups = EndGroups::new(&final_only, &predecessors, &[9, 9, 0, 1, 1, 2], 3);
        assert_eq!(groups.positions, vec![vec![2, 3, 4]]);
        assert_eq!(groups.of, vec![usize::MAX, usize::MAX, 0, 0, 0, usize::MAX]);
        assert_eq!(groups.slots, vec![vec![(0, 1)], vec![(0, 2)], vec![]]);
        let read: Vec<bool> = (0..6).map(|p| groups.read(p)).collect();
        assert_eq!(read, vec![true, true, false, false, false, false]);
    }

    #[test]
    fn the_common_part_needs_every_position_of_the_group() {
        let final_only = [false, true, true];
        let groups = EndGroups::new(&final_only, &[vec![], vec![0], vec![0]], &[9, 0, 1], 2);
        // class 7: both wait (3 and 2 times); class 8: only position 1
        let ends = [(1, 7, 3), (2, 7, 2), (1, 8, 5)];
        assert_eq!(groups.common(&ends, |_, _| true), vec![(0, 7, 2)]);
        assert_eq!(groups.common(&ends, |_, c| c == 8), vec![]);
    }
}
