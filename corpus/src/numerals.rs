//! Chinese numerals as they appear in statute labels (第一百零一条, 第二十三章, （十二）).

/// Parses a Chinese numeral such as `一千二百六十`, `一百零一`, `十` or `二〇`.
/// Returns `None` for an empty string or any character that is not a numeral.
pub fn parse_chinese_numeral(s: &str) -> Option<u32> {
    if s.is_empty() {
        return None;
    }
    if let Ok(n) = s.parse::<u32>() {
        return Some(n);
    }
    let mut total: u32 = 0;
    let mut current: u32 = 0;
    let mut saw_digit_or_unit = false;
    for c in s.chars() {
        let digit = match c {
            '零' | '〇' => Some(0),
            '一' => Some(1),
            '二' | '两' => Some(2),
            '三' => Some(3),
            '四' => Some(4),
            '五' => Some(5),
            '六' => Some(6),
            '七' => Some(7),
            '八' => Some(8),
            '九' => Some(9),
            _ => None,
        };
        if let Some(d) = digit {
            // A digit after a digit (二〇二〇) reads positionally.
            current = current.checked_mul(10)?.checked_add(d)?;
            saw_digit_or_unit = true;
            continue;
        }
        let unit = match c {
            '十' => 10,
            '百' => 100,
            '千' => 1000,
            '万' => 10_000,
            _ => return None,
        };
        // A bare unit (十 in 十二) counts as one of that unit.
        let mult = if current == 0 { 1 } else { current };
        if unit == 10_000 {
            total = (total + mult).checked_mul(unit)?;
        } else {
            total = total.checked_add(mult.checked_mul(unit)?)?;
        }
        current = 0;
        saw_digit_or_unit = true;
    }
    if !saw_digit_or_unit {
        return None;
    }
    total.checked_add(current)
}

/// Formats a number as a Chinese numeral the way statutes write labels (一百零一, 十二, 二十).
pub fn to_chinese_numeral(n: u32) -> String {
    const DIGITS: [char; 10] = ['零', '一', '二', '三', '四', '五', '六', '七', '八', '九'];
    if n == 0 {
        return "零".to_owned();
    }
    let mut out = String::new();
    let units = [(1000, '千'), (100, '百'), (10, '十')];
    let mut rest = n;
    let mut pending_zero = false;
    let mut started = false;
    for (value, unit) in units {
        let d = rest / value;
        rest %= value;
        if d > 0 {
            if pending_zero {
                out.push('零');
                pending_zero = false;
            }
            // 十二 rather than 一十二 when ten leads the number.
            if !(value == 10 && d == 1 && !started) {
                out.push(DIGITS[d as usize]);
            }
            out.push(unit);
            started = true;
        } else if started {
            pending_zero = true;
        }
    }
    if rest > 0 {
        if pending_zero {
            out.push('零');
        }
        out.push(DIGITS[rest as usize]);
    }
    if n >= 10_000 {
        return n.to_string();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_statute_numerals() {
        let cases = [
            ("一", 1),
            ("十", 10),
            ("十二", 12),
            ("二十", 20),
            ("一百", 100),
            ("一百零一", 101),
            ("一百一十", 110),
            ("一百三十三", 133),
            ("一千二百六十", 1260),
            ("一千零二", 1002),
            ("二〇", 20),
            ("两百", 200),
            ("7", 7),
        ];
        for (s, n) in cases {
            assert_eq!(parse_chinese_numeral(s), Some(n), "{s}");
        }
    }

    #[test]
    fn rejects_non_numerals() {
        assert_eq!(parse_chinese_numeral(""), None);
        assert_eq!(parse_chinese_numeral("条"), None);
        assert_eq!(parse_chinese_numeral("一条"), None);
    }

    #[test]
    fn round_trips_every_article_number_up_to_3000() {
        for n in 1..=3000 {
            let s = to_chinese_numeral(n);
            assert_eq!(parse_chinese_numeral(&s), Some(n), "{n} -> {s}");
        }
        assert_eq!(to_chinese_numeral(101), "一百零一");
        assert_eq!(to_chinese_numeral(1260), "一千二百六十");
        assert_eq!(to_chinese_numeral(1002), "一千零二");
        assert_eq!(to_chinese_numeral(15), "十五");
        assert_eq!(to_chinese_numeral(110), "一百一十");
    }
}
