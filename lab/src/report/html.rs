//! The one-page HTML report: the plots inline, then the Markdown report's
//! headings, paragraphs and tables as HTML.

use super::Results;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The cells of a Markdown table line (`| a | b |`).
fn cells(line: &str) -> impl Iterator<Item = &str> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    inner.split('|').map(str::trim)
}

/// The Markdown this crate writes (headings, paragraphs, tables) as HTML.
pub fn markdown_to_html(md: &str) -> String {
    let mut out = String::new();
    let mut in_table = false;
    let mut header = false;
    for line in md.lines() {
        let t = line.trim();
        if t.starts_with('|') {
            if !in_table {
                out.push_str("<table>\n");
                in_table = true;
                header = true;
            }
            if t.starts_with("|---") || t.starts_with("|:--") {
                continue;
            }
            let tag = if header { "th" } else { "td" };
            out.push_str("<tr>");
            for c in cells(t) {
                out.push_str(&format!("<{tag}>{}</{tag}>", escape(c)));
            }
            out.push_str("</tr>\n");
            header = false;
            continue;
        }
        if in_table {
            out.push_str("</table>\n");
            in_table = false;
        }
        if let Some(h) = t.strip_prefix("### ") {
            out.push_str(&format!("<h3>{}</h3>\n", escape(h)));
        } else if !t.is_empty() {
            let class = if t.starts_with("WARNING") {
                " class=\"warn\""
            } else {
                ""
            };
            out.push_str(&format!("<p{class}>{}</p>\n", escape(t)));
        }
    }
    if in_table {
        out.push_str("</table>\n");
    }
    out
}

/// One self-contained HTML page: the title, the plots (`svgs`, inline) and
/// the Markdown report `md`.
pub fn html(res: &Results, md: &str, svgs: &[String]) -> String {
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>tripword-lab: {}</title>\
         <style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse;margin:0.5em 0 1.5em}}\
         td,th{{border:1px solid #ccc;padding:2px 8px;text-align:right;font-size:13px}}\
         th{{background:#f4f4f4}}p{{margin:0.3em 0}}.warn{{color:#b00}}figure{{margin:1em 0}}</style>\
         </head><body>\n<h1>tripword-lab run {}</h1>\n",
        escape(&res.name),
        escape(&res.name)
    );
    for s in svgs {
        out.push_str("<figure>");
        // The SVG documents start with their own `<svg` element.
        out.push_str(s.trim_start_matches(|c| c != '<'));
        out.push_str("</figure>\n");
    }
    out.push_str(&markdown_to_html(md));
    out.push_str("</body></html>\n");
    out
}
