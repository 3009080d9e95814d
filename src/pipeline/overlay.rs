//! `annotated.mp4`: the warped board as the pipeline saw it, with the grid, the tracker's
//! board, each player's hands (White's blue, Black's red), contacts, events and rulings drawn on.

use std::collections::VecDeque;
use std::path::Path;

use opencv::core::{Mat, Point, Rect, Scalar, Size};
use opencv::prelude::*;
use opencv::{imgproc, videoio};
use shakmaty::{Color, Square};

use super::{Outcome, PipelineError};
use crate::board::Layout;

/// Height of the text strip under the board.
const STRIP: i32 = 64;

pub(super) struct Overlay {
    writer: videoio::VideoWriter,
    size: Size,
    lines: VecDeque<String>,
}

fn bgr(b: f64, g: f64, r: f64) -> Scalar {
    Scalar::new(b, g, r, 0.0)
}

impl Overlay {
    pub(super) fn create(path: &Path, layout: Layout) -> Result<Overlay, PipelineError> {
        let side = layout.side() as i32;
        let size = Size::new(side, side + STRIP);
        let fourcc = videoio::VideoWriter::fourcc('m', 'p', '4', 'v')?;
        let writer = videoio::VideoWriter::new(path, fourcc, 20.0, size, true)?;
        if !writer.is_opened()? {
            return Err(PipelineError::Output { path: path.to_owned(), message: "OpenCV cannot write MPEG-4 video here".into() });
        }
        Ok(Overlay { writer, size, lines: VecDeque::new() })
    }

    pub(super) fn frame(&mut self, o: &Outcome, layout: Layout) -> Result<(), PipelineError> {
        let mut canvas = Mat::new_size_with_default(self.size, opencv::core::CV_8UC3, Scalar::all(0.0))?;
        let side = layout.side() as i32;
        let mut board = Mat::roi_mut(&mut canvas, Rect::new(0, 0, side, side))?;
        if let Some(warped) = &o.warped {
            warped.copy_to(&mut board)?;
        }
        if let Some(reading) = &o.reading {
            let map = &reading.hands;
            let cell = side as f64 / map.side as f64;
            for (color, tint) in [(Color::White, bgr(255.0, 120.0, 0.0)), (Color::Black, bgr(0.0, 0.0, 255.0))] {
                for (i, &p) in map.of(color).iter().enumerate() {
                    if p > 0.5 {
                        let (r, c) = ((i / map.side) as f64, (i % map.side) as f64);
                        let rect = Rect::new((c * cell) as i32, (r * cell) as i32, cell.ceil() as i32, cell.ceil() as i32);
                        imgproc::rectangle(&mut board, rect, tint, 1, imgproc::LINE_8, 0)?;
                    }
                }
            }
            for sq in Square::ALL {
                if reading.square(sq).contact > 0.5 {
                    let (x, y, w, h) = layout.square_rect(sq);
                    imgproc::rectangle(&mut board, Rect::new(x as i32, y as i32, w as i32, h as i32), bgr(0.0, 255.0, 255.0), 2, imgproc::LINE_8, 0)?;
                }
            }
        }
        for sq in Square::ALL {
            let (x, y, w, h) = layout.square_rect(sq);
            imgproc::rectangle(&mut board, Rect::new(x as i32, y as i32, w as i32, h as i32), bgr(90.0, 90.0, 90.0), 1, imgproc::LINE_8, 0)?;
            if let Some(piece) = o.board.piece_at(sq) {
                let ink = if piece.color == Color::White { bgr(255.0, 255.0, 255.0) } else { bgr(0.0, 0.0, 0.0) };
                let at = Point::new(x as i32 + 3, (y + h) as i32 - 4);
                imgproc::put_text(&mut board, &piece.char().to_string(), at, imgproc::FONT_HERSHEY_SIMPLEX, 0.45, bgr(128.0, 128.0, 128.0), 3, imgproc::LINE_AA, false)?;
                imgproc::put_text(&mut board, &piece.char().to_string(), at, imgproc::FONT_HERSHEY_SIMPLEX, 0.45, ink, 1, imgproc::LINE_AA, false)?;
            }
            let _ = w;
        }
        for (event, _) in &o.events {
            self.lines.push_back(format!("{:.1}s {}", event.t, event.to_json_line()));
        }
        for record in &o.records {
            if let crate::rules::Record::Ruling(r) = record {
                self.lines.push_back(format!("{:.1}s {} {}", r.t, r.verdict.as_str(), r.article));
            }
            if let crate::rules::Record::Move(m) = record {
                self.lines.push_back(format!("{:.1}s move {}", m.t, m.san));
            }
        }
        while self.lines.len() > 3 {
            self.lines.pop_front();
        }
        let clock = format!("frame {}  {:.2}s", o.index, o.t);
        imgproc::put_text(&mut canvas, &clock, Point::new(4, side + 14), imgproc::FONT_HERSHEY_SIMPLEX, 0.4, bgr(200.0, 200.0, 200.0), 1, imgproc::LINE_AA, false)?;
        for (i, line) in self.lines.iter().enumerate() {
            let text: String = line.chars().take(80).collect();
            imgproc::put_text(&mut canvas, &text, Point::new(4, side + 30 + 14 * i as i32), imgproc::FONT_HERSHEY_SIMPLEX, 0.35, bgr(0.0, 255.0, 255.0), 1, imgproc::LINE_AA, false)?;
        }
        self.writer.write(&canvas)?;
        Ok(())
    }

    pub(super) fn finish(mut self) -> Result<(), PipelineError> {
        self.writer.release()?;
        Ok(())
    }
}
