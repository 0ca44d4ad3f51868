//! Dates and timestamps written as text, read as Spark's JSON reader reads them by default:
//! a date is `yyyy-[m]m-[d]d` (anything after a `T` or a space ignored); a timestamp is a date,
//! then optionally `T` or a space, `hh:mm[:ss[.fraction]]` and a zone (`Z`, `UTC`, `±hh`,
//! `±hh:mm` or `±hhmm`). A timestamp without a zone is read as UTC.

/// Days from 1970-01-01 to the proleptic Gregorian `year-month-day` (the "days from civil"
/// algorithm), or None for a day that does not exist.
pub fn days_from_civil(year: i64, month: u32, day: u32) -> Option<i64> {
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some(era * 146_097 + doe - 719_468)
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        _ => 31,
    }
}

/// Reads digits and separators off the front of a string.
struct Cursor<'a> {
    s: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn number(&mut self, min: usize, max: usize) -> Option<u32> {
        let start = self.at;
        while self.at < self.s.len() && self.at - start < max && self.s[self.at].is_ascii_digit() {
            self.at += 1;
        }
        if self.at - start < min {
            return None;
        }
        let mut n = 0u32;
        for &b in &self.s[start..self.at] {
            n = n * 10 + u32::from(b - b'0');
        }
        Some(n)
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.s.get(self.at) == Some(&b) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn rest(&self) -> &'a [u8] {
        &self.s[self.at..]
    }
}

fn date_part(c: &mut Cursor<'_>) -> Option<i64> {
    let negative = c.eat(b'-');
    let year = i64::from(c.number(4, 6)?);
    let year = if negative { -year } else { year };
    if !c.eat(b'-') {
        return None;
    }
    let month = c.number(1, 2)?;
    if !c.eat(b'-') {
        return None;
    }
    let day = c.number(1, 2)?;
    days_from_civil(year, month, day)
}

/// Days since 1970-01-01 of a date written as text; None when it is not one.
pub fn parse_date(text: &str) -> Option<i32> {
    let mut c = Cursor {
        s: text.trim().as_bytes(),
        at: 0,
    };
    let days = date_part(&mut c)?;
    match c.rest().first() {
        None | Some(b'T') | Some(b' ') => i32::try_from(days).ok(),
        _ => None,
    }
}

/// Microseconds since the epoch (UTC) of a timestamp written as text; None when it is not one.
pub fn parse_timestamp(text: &str) -> Option<i64> {
    let mut c = Cursor {
        s: text.trim().as_bytes(),
        at: 0,
    };
    let days = date_part(&mut c)?;
    let mut micros: i64 = 0;
    if c.eat(b'T') || c.eat(b' ') {
        let hour = c.number(1, 2)?;
        if !c.eat(b':') {
            return None;
        }
        let minute = c.number(1, 2)?;
        let second = if c.eat(b':') { c.number(1, 2)? } else { 0 };
        if hour > 23 || minute > 59 || second > 59 {
            return None;
        }
        micros = i64::from(hour * 3600 + minute * 60 + second) * 1_000_000;
        if c.eat(b'.') {
            let start = c.at;
            let digits = c.number(1, 9)?;
            let len = c.at - start;
            // Nanoseconds and finer are cut to microseconds, as Spark's timestamps hold.
            let scaled = if len >= 6 {
                digits / 10u32.pow((len - 6) as u32)
            } else {
                digits * 10u32.pow((6 - len) as u32)
            };
            micros += i64::from(scaled);
        }
    }
    let offset_s = zone_offset(c.rest())?;
    days.checked_mul(86_400_000_000)?
        .checked_add(micros)?
        .checked_sub(offset_s * 1_000_000)
}

/// The zone's offset from UTC in seconds: none or `Z`/`UTC` is 0.
fn zone_offset(zone: &[u8]) -> Option<i64> {
    if zone.is_empty() || zone == b"Z" || zone == b"UTC" {
        return Some(0);
    }
    let sign = match zone[0] {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let mut c = Cursor { s: zone, at: 1 };
    let hours = c.number(2, 2)?;
    let minutes = if c.eat(b':') {
        c.number(2, 2)?
    } else if c.rest().is_empty() {
        0
    } else {
        c.number(2, 2)?
    };
    if !c.rest().is_empty() || hours > 18 || minutes > 59 {
        return None;
    }
    Some(sign * i64::from(hours * 3600 + minutes * 60))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(parse_date("1970-01-01"), Some(0));
        assert_eq!(parse_date("2024-02-29"), Some(19_782));
        assert_eq!(parse_date("2020-1-2"), Some(18_263));
        assert_eq!(parse_date("2020-01-02T10:00:00"), Some(18_263));
        assert_eq!(parse_date("1969-12-31"), Some(-1));
        for bad in [
            "2023-02-29",
            "2020-13-01",
            "2020-01-32",
            "20-01-01",
            "2020/01/01",
            "",
        ] {
            assert_eq!(parse_date(bad), None, "{bad}");
        }
    }

    #[test]
    fn timestamps() {
        assert_eq!(parse_timestamp("1970-01-01T00:00:01Z"), Some(1_000_000));
        assert_eq!(parse_timestamp("1970-01-01 00:00:00.5"), Some(500_000));
        assert_eq!(parse_timestamp("1970-01-01T01:00:00+01:00"), Some(0));
        assert_eq!(
            parse_timestamp("1970-01-01T00:00:00-0130"),
            Some(5_400_000_000)
        );
        assert_eq!(
            parse_timestamp("1970-01-01T00:00:00.123456789Z"),
            Some(123_456)
        );
        assert_eq!(parse_timestamp("1970-01-02"), Some(86_400_000_000));
        for bad in [
            "1970-01-01T24:00:00",
            "1970-01-01T00:00:00+25:00",
            "1970-01-01Tnoon",
            "x",
        ] {
            assert_eq!(parse_timestamp(bad), None, "{bad}");
        }
    }
}
