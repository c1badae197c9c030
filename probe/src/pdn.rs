//! PDN games (Portable Draughts Notation 3.0): a file of games read into tags and the moves of
//! each game's main line, for [`crate::analyze`].
//!
//! What is read: tag pairs (`[Event "..."]`, `[FEN "W:W31:B1"]`, `[GameType "21"]`, any
//! others kept as written), move numbers (`12.` before the first mover's move, `12...`
//! before the second mover's, also joined to the move: `12.11-15`), quiet moves `a-b`,
//! captures `axb`, full capture paths `axcxb` (`:` is read as `x`), algebraic squares
//! (`c3-d4`, as Russian and Brazilian players write them), comments `{...}` (kept with the
//! move they follow) and `;` to the end of the line, and the results `1-0`, `0-1`,
//! `1/2-1/2`, `2-0`, `0-2`, `1-1`, `0-0` and `*`. Skipped: variations `(...)` (nested ones
//! too), numeric annotation glyphs `$n`, move strength marks (`!`, `?`, `!?`, ...) and
//! escape lines starting with `%`. Games follow each other; a game ends at its result or
//! where the next game's tags begin.
//!
//! Moves are read as text here; whether each is legal is for [`crate::analyze`], which knows
//! the position.
//!
//! ```
//! use dtb_probe::pdn;
//!
//! let text = r#"[Event "club"]
//! [FEN "W:WK32:BK26"]
//! 1. 32-27 {a comment} 26-30 (1... 26-31 2. 27-23) 2. 27-23 1-0
//! "#;
//! let games: Vec<_> = pdn::games(text).collect::<Result<_, _>>()?;
//! assert_eq!(games.len(), 1);
//! let g = &games[0];
//! assert_eq!(g.tag("FEN"), Some("W:WK32:BK26"));
//! let moves: Vec<&str> = g.moves.iter().map(|m| m.text.as_str()).collect();
//! assert_eq!(moves, ["32-27", "26-30", "27-23"]); // the variation is skipped
//! assert_eq!(g.moves[0].comments, ["a comment"]);
//! assert_eq!((g.moves[1].number, g.moves[1].second), (1, true));
//! assert_eq!(g.result.as_deref(), Some("1-0"));
//! # Ok::<(), pdn::PdnError>(())
//! ```

use crate::quote;

/// One game of a PDN file: its tags and the moves of its main line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Game {
    /// The game's number in the file, from 1 (games with a syntax error count too).
    pub number: usize,
    /// The line (from 1) where the game starts.
    pub line: usize,
    /// The tag pairs in file order, names and values as written (value escapes `\"`, `\\`
    /// undone).
    pub tags: Vec<(String, String)>,
    /// Comments before the first move.
    pub comments: Vec<String>,
    /// The moves of the main line, in order.
    pub moves: Vec<GameMove>,
    /// The result token that ends the game (`1-0`, `1/2-1/2`, `*`, ...), if it has one.
    pub result: Option<String>,
}

impl Game {
    /// The value of the first tag named `name` (case-insensitive).
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// One move of a game as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameMove {
    /// The move's text without move number and strength marks: `11-15`, `22x15`,
    /// `9x18x27`, `c3-d4`.
    pub text: String,
    /// Its move number: the one written before it (`12.` or `12...`), or counted on from
    /// the previous move's (1 for a first move written without one).
    pub number: u32,
    /// Whether it is the second move of its number (`12...`, or the move after `12. m`):
    /// the move of the side that did not move first in the game's variant.
    pub second: bool,
    /// The line (from 1) it is on.
    pub line: usize,
    /// Comments written right after it, in order.
    pub comments: Vec<String>,
}

impl GameMove {
    /// Its number as PDN writes it before the move: `12.` or `12...`.
    pub fn label(&self) -> String {
        if self.second {
            format!("{}...", self.number)
        } else {
            format!("{}.", self.number)
        }
    }
}

/// Why a game of a PDN file could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("game {game} (line {line}): {kind}")]
pub struct PdnError {
    /// The number of the game it belongs to (from 1).
    pub game: usize,
    /// The line (from 1) of the fault (for something left open, the line it was opened on).
    pub line: usize,
    /// What is wrong.
    pub kind: PdnErrorKind,
}

/// What is wrong in a PDN file ([`PdnError::kind`]). Text from the file is quoted bounded
/// ([`crate::quote`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PdnErrorKind {
    /// A `{` comment that is never closed.
    #[error("comment opened with '{{' is never closed")]
    UnterminatedComment,
    /// A `(` variation that is never closed.
    #[error("variation opened with '(' is never closed")]
    UnterminatedVariation,
    /// A `)` with no `(` before it.
    #[error("')' closes no variation")]
    UnbalancedParenthesis,
    /// A tag that is not `[Name "value"]`.
    #[error("malformed tag: {0} (expected [Name \"value\"])")]
    BadTag(String),
    /// A `}` outside a comment, or a `]` outside a tag.
    #[error("unexpected {0}")]
    Stray(String),
    /// A word that is no move number, move, result or annotation.
    #[error("{0} is not a move, a move number or a result")]
    BadToken(String),
}

/// The games of PDN `text`, one at a time ([`Games`]).
pub fn games(text: &str) -> Games<'_> {
    Games {
        text: text.strip_prefix('\u{feff}').unwrap_or(text),
        at: 0,
        line: 1,
        number: 0,
        queued: None,
    }
}

/// An iterator over the games of a PDN text ([`games`]): each a [`Game`] or the
/// [`PdnError`] that stopped it; after an error, reading goes on with the next game (the next
/// line that starts with `[`), so one broken game costs only itself.
#[derive(Clone, Debug)]
pub struct Games<'a> {
    text: &'a str,
    at: usize,
    line: usize,
    number: usize,
    /// A token read with the one before it (the move of `12.11-15`).
    queued: Option<Token>,
}

/// A token of the text.
#[derive(Clone, Debug)]
enum Token {
    Tag(String, String),
    Comment(String),
    /// A move with the move number joined to it or before it (`12.` alone is a `Number`).
    Move(String),
    Number(u32, bool),
    Result(String),
}

const RESULTS: [&str; 8] = ["1-0", "0-1", "1/2-1/2", "2-0", "0-2", "1-1", "0-0", "*"];

impl Iterator for Games<'_> {
    type Item = Result<Game, PdnError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.skip_space();
        if self.at >= self.text.len() {
            return None;
        }
        self.number += 1;
        let mut game = Game {
            number: self.number,
            line: self.line,
            tags: Vec::new(),
            comments: Vec::new(),
            moves: Vec::new(),
            result: None,
        };
        match self.read_game(&mut game) {
            // Only comments after the last game: no game.
            Ok(()) if game.tags.is_empty() && game.moves.is_empty() && game.result.is_none() => {
                self.number -= 1;
                self.next()
            }
            Ok(()) => Some(Ok(game)),
            Err((line, at, kind)) => {
                self.resync(line, at);
                Some(Err(PdnError {
                    game: self.number,
                    line,
                    kind,
                }))
            }
        }
    }
}

/// A fault: its line, the byte offset of that line's text where it was found, what.
type Fault = (usize, usize, PdnErrorKind);

impl Games<'_> {
    fn rest(&self) -> &str {
        &self.text[self.at..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += c.len_utf8();
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    /// Skips white space, `;` comments and `%` escape lines.
    fn skip_space(&mut self) {
        loop {
            match self.peek() {
                Some(c) if c.is_whitespace() => {
                    self.bump();
                }
                Some(';') => self.skip_line(),
                Some('%') if self.at == 0 || self.text[..self.at].ends_with('\n') => {
                    self.skip_line()
                }
                _ => return,
            }
        }
    }

    fn skip_line(&mut self) {
        match self.rest().find('\n') {
            Some(i) => {
                self.at += i + 1;
                self.line += 1;
            }
            None => self.at = self.text.len(),
        }
    }

    /// After an error on line `line` at byte `at`: go on at the first line after it that
    /// starts with `[`.
    fn resync(&mut self, line: usize, at: usize) {
        // Back to the fault (one left open ran to the end), then on past its line.
        self.at = at;
        self.line = line;
        self.queued = None;
        self.skip_line();
        while self.at < self.text.len() && !self.rest().starts_with('[') {
            self.skip_line();
        }
    }

    fn read_game(&mut self, game: &mut Game) -> Result<(), Fault> {
        let mut counter: Option<(u32, bool)> = None;
        let mut pending: Option<(u32, bool)> = None;
        loop {
            self.skip_space();
            if self.peek() == Some('[') && (!game.moves.is_empty() || game.result.is_some()) {
                return Ok(());
            }
            let line = self.line;
            let Some(token) = self.token()? else {
                return Ok(());
            };
            match token {
                Token::Tag(n, v) => game.tags.push((n, v)),
                Token::Comment(c) => match game.moves.last_mut() {
                    Some(m) => m.comments.push(c),
                    None => game.comments.push(c),
                },
                Token::Number(n, second) => pending = Some((n, second)),
                Token::Result(r) => {
                    game.result = Some(r);
                    return Ok(());
                }
                Token::Move(text) => {
                    let (number, second) = match (pending.take(), counter) {
                        (Some(p), _) => p,
                        (None, Some((n, false))) => (n, true),
                        (None, Some((n, true))) => (n.saturating_add(1), false),
                        (None, None) => (1, false),
                    };
                    counter = Some((number, second));
                    game.moves.push(GameMove {
                        text,
                        number,
                        second,
                        line,
                        comments: Vec::new(),
                    });
                }
            }
        }
    }

    /// The next token, `None` at the end of the text; variations and glyphs are skipped.
    fn token(&mut self) -> Result<Option<Token>, Fault> {
        if let Some(t) = self.queued.take() {
            return Ok(Some(t));
        }
        loop {
            self.skip_space();
            let (line, at) = (self.line, self.at);
            let Some(c) = self.peek() else {
                return Ok(None);
            };
            match c {
                '[' => return self.tag().map(Some),
                '{' => {
                    self.bump();
                    let Some(end) = self.rest().find('}') else {
                        return Err((line, at, PdnErrorKind::UnterminatedComment));
                    };
                    let body = self.rest()[..end].to_string();
                    self.advance(end + 1);
                    return Ok(Some(Token::Comment(body.trim().to_string())));
                }
                '(' => self.skip_variation()?,
                ')' => return Err((line, at, PdnErrorKind::UnbalancedParenthesis)),
                '}' | ']' => return Err((line, at, PdnErrorKind::Stray(quote(&c.to_string())))),
                '$' => {
                    self.bump();
                    let word = self.word();
                    if word.is_empty() || !word.bytes().all(|b| b.is_ascii_digit()) {
                        return Err((line, at, PdnErrorKind::BadToken(quote(&format!("${word}")))));
                    }
                }
                _ => {
                    let word = self.word();
                    let (first, second) = word_tokens(word).map_err(|k| (line, at, k))?;
                    if let Some(t) = second {
                        self.queued = Some(t);
                    }
                    if let Some(t) = first {
                        return Ok(Some(t));
                    }
                }
            }
        }
    }

    /// Moves past `n` bytes of the rest, counting lines.
    fn advance(&mut self, n: usize) {
        let end = (self.at + n).min(self.text.len());
        self.line += self.text[self.at..end]
            .bytes()
            .filter(|&b| b == b'\n')
            .count();
        self.at = end;
    }

    /// The word at the cursor (up to white space or a character that starts another
    /// token), consumed.
    fn word(&mut self) -> &str {
        let rest = &self.text[self.at..];
        let len = rest
            .find(|c: char| c.is_whitespace() || "{}()[];".contains(c))
            .unwrap_or(rest.len());
        let start = self.at;
        self.at += len;
        &self.text[start..start + len]
    }

    /// Skips a variation `( ... )` with any nested in it and the comments in it.
    fn skip_variation(&mut self) -> Result<(), Fault> {
        let (open, open_at) = (self.line, self.at);
        let mut depth = 0usize;
        while let Some(c) = self.bump() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                '{' => {
                    let (start, start_at) = (self.line, self.at - 1);
                    let Some(end) = self.rest().find('}') else {
                        return Err((start, start_at, PdnErrorKind::UnterminatedComment));
                    };
                    self.advance(end + 1);
                }
                ';' => self.skip_line(),
                _ => {}
            }
        }
        Err((open, open_at, PdnErrorKind::UnterminatedVariation))
    }

    /// A tag pair `[Name "value"]`, the cursor on its `[`.
    fn tag(&mut self) -> Result<Token, Fault> {
        let (line, at) = (self.line, self.at);
        let rest = self.rest();
        // A tag stays on its line.
        let end_of_line = rest.find('\n').unwrap_or(rest.len());
        let bad = |s: &str| (line, at, PdnErrorKind::BadTag(quote(s)));
        let text = &rest[..end_of_line];
        let inner = &text[1..];
        let name_len = inner
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(inner.len());
        let name = &inner[..name_len];
        let after = inner[name_len..].trim_start();
        if name.is_empty() || !after.starts_with('"') {
            return Err(bad(text.trim_end()));
        }
        let mut value = String::new();
        let mut chars = after[1..].char_indices();
        let close = loop {
            match chars.next() {
                None => return Err(bad(text.trim_end())),
                Some((i, '"')) => break i,
                Some((_, '\\')) => match chars.next() {
                    Some((_, c)) => value.push(c),
                    None => return Err(bad(text.trim_end())),
                },
                Some((_, c)) => value.push(c),
            }
        };
        let tail = &after[1 + close + 1..];
        let Some(past) = tail.trim_start().strip_prefix(']') else {
            return Err(bad(text.trim_end()));
        };
        let used = text.len() - past.len();
        let name = name.to_string();
        self.advance(used);
        Ok(Token::Tag(name, value))
    }
}

/// The tokens of one word: a result, a move number, a move, or a number joined to its move
/// (`12.11-15`: both); `(None, None)` for a strength mark alone (`!?`).
fn word_tokens(word: &str) -> Result<(Option<Token>, Option<Token>), PdnErrorKind> {
    if RESULTS.contains(&word) {
        return Ok((Some(Token::Result(word.to_string())), None));
    }
    let bad = || PdnErrorKind::BadToken(quote(word));
    let digits = word.bytes().take_while(u8::is_ascii_digit).count();
    let dots = word[digits..].bytes().take_while(|&b| b == b'.').count();
    let (number, rest) = if digits > 0 && dots > 0 {
        let n: u32 = word[..digits].parse().map_err(|_| bad())?;
        (Some(Token::Number(n, dots > 1)), &word[digits + dots..])
    } else {
        (None, word)
    };
    let text = rest.trim_end_matches(['!', '?']);
    if text.is_empty() {
        return if number.is_some() || !rest.is_empty() {
            Ok((number, None))
        } else {
            Err(bad())
        };
    }
    // A result with a mark (`1-1?`) is still a result, never a move.
    let mv = if RESULTS.contains(&text) {
        Token::Result(text.to_string())
    } else if is_move(text) {
        Token::Move(text.to_string())
    } else {
        return Err(bad());
    };
    Ok(match number {
        Some(n) => (Some(n), Some(mv)),
        None => (Some(mv), None),
    })
}

/// Whether `text` is move notation: squares (numbers, or algebraic `c3`) joined by `-` (two
/// squares) or by `x` or `:` (two or more).
fn is_move(text: &str) -> bool {
    let parts: Vec<&str> = text.split(['-', 'x', 'X', ':']).collect();
    let quiet = text.contains('-');
    let capture = text.contains(['x', 'X', ':']);
    if parts.len() < 2 || (quiet && (capture || parts.len() != 2)) {
        return false;
    }
    parts.iter().all(|p| {
        let b = p.as_bytes();
        match b.first() {
            Some(c) if c.is_ascii_digit() => b.len() <= 3 && b.iter().all(u8::is_ascii_digit),
            Some(c) if c.is_ascii_lowercase() => {
                (2..=3).contains(&b.len()) && b[1..].iter().all(u8::is_ascii_digit)
            }
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str) -> Vec<Result<Game, PdnError>> {
        games(text).collect()
    }

    fn one(text: &str) -> Game {
        let mut g = all(text);
        assert_eq!(g.len(), 1, "{g:?}");
        g.remove(0).unwrap()
    }

    fn texts(g: &Game) -> Vec<&str> {
        g.moves.iter().map(|m| m.text.as_str()).collect()
    }

    #[test]
    fn tags_comments_numbers_and_results() {
        let g = one(
            "[Event \"Club \\\"open\\\" 2024\"]\n[GameType \"21\"]\n[FEN \"B:W18,K27:B3\"]\n\
             {before} 1. 3-7 {a} {b} 18-15 2. 7-10 15x6 1-0\n",
        );
        assert_eq!(g.tag("event"), Some("Club \"open\" 2024"));
        assert_eq!(g.tag("GameType"), Some("21"));
        assert_eq!(g.tags.len(), 3);
        assert_eq!(g.comments, ["before"]);
        assert_eq!(texts(&g), ["3-7", "18-15", "7-10", "15x6"]);
        assert_eq!(g.moves[0].comments, ["a", "b"]);
        let numbers: Vec<(u32, bool)> = g.moves.iter().map(|m| (m.number, m.second)).collect();
        assert_eq!(numbers, [(1, false), (1, true), (2, false), (2, true)]);
        assert_eq!(g.moves[3].label(), "2...");
        assert_eq!(g.result.as_deref(), Some("1-0"));
        assert_eq!((g.number, g.line), (1, 1));
        assert_eq!(g.moves[0].line, 4);
    }

    #[test]
    fn every_result_ends_a_game() {
        for r in RESULTS {
            let text = format!("1. 11-15 {r}\n2. 9-14 {r}");
            let g = all(&text);
            assert_eq!(g.len(), 2, "{r}");
            // Marked, or joined to a number, it is still a result (found by fuzzing:
            // `1-1?` was read as a move).
            assert_eq!(one(&format!("1. 11-15 {r}?")).result.as_deref(), Some(r));
            assert_eq!(one(&format!("1. 11-15 2.{r}")).result.as_deref(), Some(r));
            for game in g {
                assert_eq!(game.unwrap().result.as_deref(), Some(r));
            }
        }
    }

    #[test]
    fn variations_glyphs_and_marks_are_skipped() {
        let g = one(
            "1. 11-15 (1. 9-13 {a (paren} (1... 22-18 ; ) in a line comment\n 2. 5-9)) 23-19! \
             $12 2... 8-11?! (2... 9-13 $1) 3. 22-17 ; a rest-of-line comment\n\
             %an escape line 1. 1-2 (\n 3... 9-13 *",
        );
        assert_eq!(texts(&g), ["11-15", "23-19", "8-11", "22-17", "9-13"]);
        assert_eq!(g.moves[3].line, 2);
        assert_eq!((g.moves[4].number, g.moves[4].second), (3, true));
        assert_eq!(g.result.as_deref(), Some("*"));
    }

    #[test]
    fn numbers_joined_to_moves_captures_and_algebraic_squares() {
        let g = one("12.9x18x27 12...32x23 13.c3-d4 13... h6xf4xd2 14. 5:14 15. 1x10");
        assert_eq!(
            texts(&g),
            ["9x18x27", "32x23", "c3-d4", "h6xf4xd2", "5:14", "1x10"]
        );
        let numbers: Vec<(u32, bool)> = g.moves.iter().map(|m| (m.number, m.second)).collect();
        assert_eq!(
            numbers,
            [
                (12, false),
                (12, true),
                (13, false),
                (13, true),
                (14, false),
                (15, false)
            ]
        );
        assert_eq!(g.result, None);
        // Without any number: counted from 1.
        let g = one("11-15 23-19 8-11");
        let numbers: Vec<(u32, bool)> = g.moves.iter().map(|m| (m.number, m.second)).collect();
        assert_eq!(numbers, [(1, false), (1, true), (2, false)]);
    }

    #[test]
    fn many_games_with_and_without_tags_and_results() {
        let text = "\u{feff}[Event \"a\"]\n1. 11-15 *\n\n[Event \"b\"]\n1. 9-14\n\
                    [Event \"c\"]\n\n1. 10-15 1/2-1/2\n1. 12-16 0-2 {trailing comment}\n";
        let g: Vec<Game> = games(text).map(Result::unwrap).collect();
        assert_eq!(g.len(), 4);
        let events: Vec<Option<&str>> = g.iter().map(|g| g.tag("Event")).collect();
        assert_eq!(events, [Some("a"), Some("b"), Some("c"), None]);
        assert_eq!(g[1].result, None);
        assert_eq!(texts(&g[1]), ["9-14"]);
        assert_eq!(g[2].result.as_deref(), Some("1/2-1/2"));
        assert_eq!((g[3].number, g[3].line), (4, 9));
        assert!(all("").is_empty());
        assert!(all("  \n{only a comment}\n").is_empty());
    }

    fn error(text: &str) -> PdnError {
        all(text)
            .into_iter()
            .find_map(Result::err)
            .expect("an error")
    }

    #[test]
    fn malformed_input_is_a_typed_error_with_its_line() {
        let cases: [(&str, usize, PdnErrorKind); 7] = [
            (
                "[Event \"x\"]\n1. 11-15 {never closed\n\n",
                2,
                PdnErrorKind::UnterminatedComment,
            ),
            (
                "1. 11-15\n(1. 9-14 23-19\n",
                2,
                PdnErrorKind::UnterminatedVariation,
            ),
            ("1. 11-15 23-19)\n", 1, PdnErrorKind::UnbalancedParenthesis),
            (
                "[Event \"x]\n1. 11-15 *",
                1,
                PdnErrorKind::BadTag("\"[Event \\\"x]\"".to_string()),
            ),
            ("1. 11-15 }", 1, PdnErrorKind::Stray("\"}\"".to_string())),
            (
                "\n\n1. 11-15 Nf3 *",
                3,
                PdnErrorKind::BadToken("\"Nf3\"".to_string()),
            ),
            (
                "1. 11-15-19 *",
                1,
                PdnErrorKind::BadToken("\"11-15-19\"".to_string()),
            ),
        ];
        for (text, line, kind) in cases {
            let e = error(text);
            assert_eq!((e.game, e.line, &e.kind), (1, line, &kind), "{text:?}");
        }
        assert_eq!(
            error("1. 11-15 Nf3 *").to_string(),
            "game 1 (line 1): \"Nf3\" is not a move, a move number or a result"
        );
        // Bad tags of every shape.
        for tag in [
            "[]",
            "[Event]",
            "[Event x]",
            "[ \"x\"]",
            "[Event \"x\"",
            "[Event \"x\\",
        ] {
            let e = error(tag);
            assert!(matches!(e.kind, PdnErrorKind::BadTag(_)), "{tag}: {e:?}");
        }
    }

    #[test]
    fn reading_goes_on_with_the_next_game_after_an_error() {
        let text = "[Event \"1\"]\n1. 11-15 ) 23-19 *\n[Event \"2\"]\n1. 9-14 *\n\
                    [Event \"3\"]\n1. 10-15 {open\n[Event \"4\"]\n1. 12-16 *\n";
        let g = all(text);
        assert_eq!(g.len(), 4, "{g:?}");
        assert_eq!(g[0].as_ref().unwrap_err().line, 2);
        assert_eq!(g[1].as_ref().unwrap().tag("Event"), Some("2"));
        let e = g[2].as_ref().unwrap_err();
        assert_eq!(
            (e.game, e.line, &e.kind),
            (3, 6, &PdnErrorKind::UnterminatedComment)
        );
        let last = g[3].as_ref().unwrap();
        assert_eq!((last.number, last.tag("Event")), (4, Some("4")));
        assert_eq!(texts(last), ["12-16"]);
    }

    #[test]
    fn hostile_input_is_quoted_bounded() {
        let long = "7".repeat(1 << 20);
        let e = error(&format!("1. {long}"));
        assert!(e.to_string().len() < 200, "{}", e.to_string().len());
        let e = error(&format!("[{long}"));
        assert!(e.to_string().len() < 200);
        // Deep nesting and odd bytes: errors, no panic.
        let deep = "(".repeat(100_000);
        assert!(matches!(
            error(&deep).kind,
            PdnErrorKind::UnterminatedVariation
        ));
        for text in [
            "1.",
            "1...",
            "$",
            "$x",
            "[É \"x\"]",
            "é-ü",
            "1. 99999999999-1",
            "\u{0}",
        ] {
            let _ = all(text);
        }
    }
}
