//! The one-page HTML report: the Markdown report as text, and the plots
//! inline.

use super::Results;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// One self-contained HTML page: the title, the plots (`svgs`, inline) and
/// the Markdown report `md` (pre-formatted).
pub fn html(res: &Results, md: &str, svgs: &[String]) -> String {
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>tripword-lab: {}</title>\
         <style>body{{font-family:sans-serif;margin:2em}}pre{{font-size:13px;line-height:1.35}}\
         figure{{margin:1em 0}}</style></head><body>\n<h1>tripword-lab run {}</h1>\n",
        escape(&res.name),
        escape(&res.name)
    );
    for s in svgs {
        out.push_str("<figure>");
        // The SVG documents start with their own `<svg` element.
        out.push_str(s.trim_start_matches(|c| c != '<'));
        out.push_str("</figure>\n");
    }
    out.push_str("<pre>");
    out.push_str(&escape(md));
    out.push_str("</pre>\n</body></html>\n");
    out
}
