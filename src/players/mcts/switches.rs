//! The enhancements of the tree search that the command line switches on (`mcts+mast`), by name.

/// A search enhancement that can be switched on for `mcts` and `uct` (`mcts+mast`), so that each is
/// measured on its own against the same search without it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Switch {
    /// Playouts guided by each move's average reward (MAST).
    Mast,
    /// Playouts guided by the averages of moves and of move pairs (NST).
    Nst,
    /// Moves in the tree judged by their all-moves-as-first averages too (RAVE).
    Rave,
    /// RAVE with the statistics of the deepest well-visited node of the walk (GRAVE).
    Grave,
    /// Each new leaf judged by 64 playouts at once, one per bit of a word on the network.
    Batch,
    /// Equal states share one node of the tree, whatever order of moves reached them.
    Trans,
    /// Playouts take a move that wins at once when there is one.
    Decisive,
    /// Playouts take a move that wins at once, and avoid one after which another role wins at once.
    Greedy,
    /// Each new node whose mover wins in one move is solved at once.
    Lookahead,
    /// Playouts take a move that makes a winning proposition true (found by analysis, not by trying).
    Wins,
    /// Winning playouts that also block: a move that lets another role take such a win is replaced.
    Block,
    /// Playouts cut short and judged by the goals, where a probe finds goals that predict the end.
    Cutoff,
    /// New nodes of a duel seeded with the material balance of piece counts a probe learns.
    Pieces,
    /// Playouts of a duel take a piece where a move can, the pieces found by the piece probe.
    Captures,
    /// Selection by UCB-Tuned: exploration scaled by the variance of the rewards at the node.
    Tuned,
    /// Node values recomputed now and then from their moves' averages as UCB1 would weigh them
    /// (Sancho's node score normalisation).
    Norm,
    /// A walk whose selection would take a solved move (not a win) takes the best unsolved one
    /// instead, the nodes above it given the solved move's value (Sancho's score overrides).
    Detour,
    /// A greedy playout from a new node that ends at its first or second move is checked for a proof:
    /// the node's mover wins at once, or every move of it lets the other role win at once (Sancho's
    /// greedy rollouts mark such nodes complete).
    Endings,
    /// A node where two roles move at once is solved when its solved children show a pure saddle
    /// point: a move that wins whatever the other role plays, or a move of each role whose every
    /// joint move is solved, the least values they guarantee adding up to the whole reward.
    Saddle,
    /// Walks gather a batch of new leaves (64), each holding a virtual loss on its path, and the
    /// leaves are played out at once, one per bit of a word on the network.
    Leaves,
}

impl Switch {
    /// Every switch.
    pub const ALL: [Switch; 20] = [
        Switch::Mast,
        Switch::Nst,
        Switch::Rave,
        Switch::Grave,
        Switch::Batch,
        Switch::Trans,
        Switch::Decisive,
        Switch::Greedy,
        Switch::Lookahead,
        Switch::Wins,
        Switch::Block,
        Switch::Cutoff,
        Switch::Pieces,
        Switch::Captures,
        Switch::Tuned,
        Switch::Norm,
        Switch::Detour,
        Switch::Endings,
        Switch::Saddle,
        Switch::Leaves,
    ];

    /// The switch's name after a `+`.
    pub fn as_str(self) -> &'static str {
        match self {
            Switch::Mast => "mast",
            Switch::Nst => "nst",
            Switch::Rave => "rave",
            Switch::Grave => "grave",
            Switch::Batch => "batch",
            Switch::Trans => "trans",
            Switch::Decisive => "decisive",
            Switch::Greedy => "greedy",
            Switch::Lookahead => "lookahead",
            Switch::Wins => "wins",
            Switch::Block => "block",
            Switch::Cutoff => "cutoff",
            Switch::Pieces => "pieces",
            Switch::Captures => "captures",
            Switch::Tuned => "tuned",
            Switch::Norm => "norm",
            Switch::Detour => "detour",
            Switch::Endings => "endings",
            Switch::Saddle => "saddle",
            Switch::Leaves => "leaves",
        }
    }
}
