//! Photos as a source: a folder of stills or a glob, read in natural name order (`img2` before
//! `img10`), timed by their EXIF capture times, decoded with the `image` crate, turned upright
//! by their EXIF orientation and handed on as OpenCV BGR frames.

use std::cmp::Ordering;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use image::error::{LimitError, LimitErrorKind};
use image::{DynamicImage, ImageDecoder, ImageError, ImageReader};
use opencv::core::{CV_8UC3, Mat, Scalar};
use opencv::prelude::*;

/// Where a series of photos is found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stills {
    /// Every file in a folder, but hidden ones (`.name`) and subfolders.
    Folder(PathBuf),
    /// The files a glob pattern matches (`game/*.jpg`), but hidden ones unless the pattern
    /// spells out their leading dot.
    Pattern(String),
}

impl std::fmt::Display for Stills {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stills::Folder(p) => write!(f, "{}", p.display()),
            Stills::Pattern(p) => f.write_str(p),
        }
    }
}

/// Seconds between two photos timed by their order: where the photos do not all carry an EXIF
/// capture time, or those times do not increase from one photo to the next, the n-th photo
/// (from 0) is at n seconds. That is near the pace of a camera taking a still or two a second;
/// photos taken much faster are slowed down (frames of a 20 fps video a second apart are a
/// twentieth of real speed, and the tracker, whose waits are in seconds, loses moves in them).
pub const ORDER_INTERVAL_S: f64 = 1.0;

/// What can go wrong finding or reading photos.
#[derive(Debug, thiserror::Error)]
pub enum StillsError {
    /// The folder (or a folder the pattern walks) cannot be listed.
    #[error("{}: cannot list: {error}", path.display())]
    List {
        /// The folder or entry.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The pattern is not a glob.
    #[error("{pattern}: not a glob pattern: {error}")]
    Pattern {
        /// The pattern.
        pattern: String,
        /// What is wrong with it.
        error: glob::PatternError,
    },
    /// No photo to read.
    #[error("{from}: no photos (a folder of photos, or a quoted glob such as 'game/*.jpg', is read as a series of stills)")]
    Empty {
        /// The folder or pattern.
        from: Stills,
    },
    /// A file that is not a photo the `image` crate reads (JPEG or PNG).
    #[error("{}, frame {frame}: not a photo touchmove can read (JPEG or PNG): {error}", path.display())]
    Decode {
        /// The file.
        path: PathBuf,
        /// The frame it would have been.
        frame: u64,
        /// Why.
        error: ImageError,
    },
    /// OpenCV could not take the decoded pixels.
    #[error("{}, frame {frame}: OpenCV: {error}", path.display())]
    OpenCv {
        /// The file.
        path: PathBuf,
        /// The frame.
        frame: u64,
        /// OpenCV's error.
        error: opencv::Error,
    },
}

impl Stills {
    /// The photos, in natural name order; at least one.
    pub fn photos(&self) -> Result<Vec<PathBuf>, StillsError> {
        let mut photos = match self {
            Stills::Folder(folder) => {
                let list = |error| StillsError::List { path: folder.clone(), error };
                let mut photos = Vec::new();
                for entry in std::fs::read_dir(folder).map_err(list)? {
                    let entry = entry.map_err(list)?;
                    let hidden = entry.file_name().to_string_lossy().starts_with('.');
                    if !hidden && entry.path().is_file() {
                        photos.push(entry.path());
                    }
                }
                photos
            }
            Stills::Pattern(pattern) => {
                let options = glob::MatchOptions { require_literal_leading_dot: true, ..glob::MatchOptions::new() };
                let paths = glob::glob_with(pattern, options).map_err(|error| StillsError::Pattern { pattern: pattern.clone(), error })?;
                let mut photos = Vec::new();
                for path in paths {
                    let path = path.map_err(|e| StillsError::List { path: e.path().to_owned(), error: std::io::Error::from(e) })?;
                    if path.is_file() {
                        photos.push(path);
                    }
                }
                photos
            }
        };
        if photos.is_empty() {
            return Err(StillsError::Empty { from: self.clone() });
        }
        photos.sort_by(|a, b| natural_cmp(&a.to_string_lossy(), &b.to_string_lossy()));
        Ok(photos)
    }
}

/// Compares names as people do: runs of digits by their value (`img2` before `img10`), the rest
/// character by character; names equal that way (`img02`, `img2`) by their characters.
fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (mut x, mut y) = (a, b);
    loop {
        match (x.chars().next(), y.chars().next()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(c), Some(d)) if c.is_ascii_digit() && d.is_ascii_digit() => {
                let (m, n) = (digits(x), digits(y));
                let (p, q) = (x[..m].trim_start_matches('0'), y[..n].trim_start_matches('0'));
                let by_value = p.len().cmp(&q.len()).then_with(|| p.cmp(q));
                if by_value != Ordering::Equal {
                    return by_value;
                }
                (x, y) = (&x[m..], &y[n..]);
            }
            (Some(c), Some(d)) => {
                if c != d {
                    return c.cmp(&d);
                }
                (x, y) = (&x[c.len_utf8()..], &y[d.len_utf8()..]);
            }
        }
    }
}

/// The length in bytes of the run of ASCII digits `s` starts with.
fn digits(s: &str) -> usize {
    s.bytes().take_while(u8::is_ascii_digit).count()
}

/// The photos of a series, in order, with their times.
pub struct Reader {
    /// Each photo and its time, seconds after the first.
    photos: Vec<(PathBuf, f64)>,
    /// The next photo to read.
    next: usize,
}

impl Reader {
    /// Lists the photos of `stills` and reads their capture times (see [`ORDER_INTERVAL_S`]).
    /// Nothing is decoded yet: a file that is not a photo fails when its turn comes.
    pub fn open(stills: &Stills) -> Result<Reader, StillsError> {
        let paths = stills.photos()?;
        let taken: Vec<Option<f64>> = paths.iter().map(|p| taken_at(p)).collect();
        let times = match exif_times(&taken) {
            Ok(times) => times,
            Err(Untimed { photo }) => {
                if taken.iter().any(Option::is_some) {
                    let what = if taken[photo].is_none() { "has no EXIF capture time" } else { "was not taken after the one before" };
                    tracing::warn!("{stills}: {} {what}; the photos are timed by their order, {ORDER_INTERVAL_S} s apart", paths[photo].display());
                }
                (0..paths.len()).map(|i| i as f64 * ORDER_INTERVAL_S).collect()
            }
        };
        Ok(Reader { photos: paths.into_iter().zip(times).collect(), next: 0 })
    }

    /// The next photo, upright, BGR, with its time; `None` after the last. `frame` names it in
    /// errors.
    pub fn next(&mut self, frame: u64) -> Option<Result<(Mat, f64), StillsError>> {
        let (path, t) = self.photos.get(self.next)?;
        self.next += 1;
        Some(decode(path, frame).map(|image| (image, *t)))
    }
}

/// Where the capture times of a series do not serve: the first photo without one, or not
/// taken after the photo before it.
#[derive(Debug, PartialEq, Eq)]
struct Untimed {
    photo: usize,
}

/// The times of a series, seconds after the first photo, from the photos' capture times: all
/// must be known and increasing.
fn exif_times(taken: &[Option<f64>]) -> Result<Vec<f64>, Untimed> {
    let mut times = Vec::with_capacity(taken.len());
    let mut before = None;
    for (photo, at) in taken.iter().enumerate() {
        let at = at.ok_or(Untimed { photo })?;
        if before.is_some_and(|b| at <= b) {
            return Err(Untimed { photo });
        }
        before = Some(at);
        times.push(at - taken[0].unwrap_or(at));
    }
    Ok(times)
}

/// When the photo was taken, in seconds of the camera's clock (its time zone ignored: a series
/// comes from one camera): EXIF `DateTimeOriginal`, with `SubSecTimeOriginal` where present.
/// `None` where the file has no EXIF or no such time.
fn taken_at(path: &Path) -> Option<f64> {
    let file = File::open(path).ok()?;
    let exif = exif::Reader::new().read_from_container(&mut BufReader::new(file)).ok()?;
    capture_time(&exif)
}

/// The capture time of parsed EXIF data, in seconds (see [`taken_at`]).
fn capture_time(exif: &exif::Exif) -> Option<f64> {
    let ascii = |tag| match &exif.get_field(tag, exif::In::PRIMARY)?.value {
        exif::Value::Ascii(parts) => parts.first().cloned(),
        _ => None,
    };
    let mut time = exif::DateTime::from_ascii(&ascii(exif::Tag::DateTimeOriginal)?).ok()?;
    if let Some(subsec) = ascii(exif::Tag::SubSecTimeOriginal) {
        // A malformed fraction leaves the whole second.
        let _ = time.parse_subsec(&subsec);
    }
    let valid = (1..=12).contains(&time.month) && (1..=31).contains(&time.day) && time.hour < 24 && time.minute < 60 && time.second < 61;
    if !valid {
        return None;
    }
    let day = days_from_civil(i64::from(time.year), i64::from(time.month), i64::from(time.day));
    let seconds = day * 86_400 + i64::from(time.hour) * 3600 + i64::from(time.minute) * 60 + i64::from(time.second);
    Some(seconds as f64 + f64::from(time.nanosecond.unwrap_or(0)) * 1e-9)
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (Howard Hinnant's
/// `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// Decodes a photo, turns it upright by its EXIF orientation and makes it an OpenCV BGR image.
fn decode(path: &Path, frame: u64) -> Result<Mat, StillsError> {
    let failed = |error| StillsError::Decode { path: path.to_owned(), frame, error };
    let mut decoder = ImageReader::open(path)
        .and_then(ImageReader::with_guessed_format)
        .map_err(|e| failed(ImageError::IoError(e)))?
        .into_decoder()
        .map_err(failed)?;
    let orientation = decoder.orientation().map_err(failed)?;
    let mut image = DynamicImage::from_decoder(decoder).map_err(failed)?;
    image.apply_orientation(orientation);
    let rgb = image.into_rgb8();
    let (Ok(cols), Ok(rows)) = (i32::try_from(rgb.width()), i32::try_from(rgb.height())) else {
        return Err(failed(ImageError::Limits(LimitError::from_kind(LimitErrorKind::DimensionError))));
    };
    let opencv = |error| StillsError::OpenCv { path: path.to_owned(), frame, error };
    let mut bgr = Mat::new_rows_cols_with_default(rows, cols, CV_8UC3, Scalar::all(0.0)).map_err(opencv)?;
    for (to, from) in bgr.data_bytes_mut().map_err(opencv)?.chunks_exact_mut(3).zip(rgb.as_raw().chunks_exact(3)) {
        to.copy_from_slice(&[from[2], from[1], from[0]]);
    }
    Ok(bgr)
}

#[cfg(test)]
mod tests {
    use exif::experimental::Writer;
    use exif::{Field, In, Tag, Value};
    use image::RgbImage;
    use image::codecs::jpeg::JpegEncoder;

    use super::*;

    /// EXIF data (TIFF bytes) with an orientation and a capture time (`2026:12:02 17:40:00`,
    /// and the fraction's digits), each where given.
    fn exif_data(orientation: Option<u16>, taken: Option<(&str, &str)>) -> Vec<u8> {
        let mut fields = Vec::new();
        if let Some(o) = orientation {
            fields.push(Field { tag: Tag::Orientation, ifd_num: In::PRIMARY, value: Value::Short(vec![o]) });
        }
        if let Some((time, subsec)) = taken {
            fields.push(Field { tag: Tag::DateTimeOriginal, ifd_num: In::PRIMARY, value: Value::Ascii(vec![time.as_bytes().to_vec()]) });
            if !subsec.is_empty() {
                fields.push(Field { tag: Tag::SubSecTimeOriginal, ifd_num: In::PRIMARY, value: Value::Ascii(vec![subsec.as_bytes().to_vec()]) });
            }
        }
        let mut writer = Writer::new();
        for field in &fields {
            writer.push_field(field);
        }
        let mut tiff = std::io::Cursor::new(Vec::new());
        writer.write(&mut tiff, false).unwrap();
        tiff.into_inner()
    }

    /// Writes `image` as a JPEG with an APP1 segment of EXIF data, as cameras do.
    fn write_jpeg(path: &Path, image: &RgbImage, exif: Option<Vec<u8>>) {
        let mut jpeg = Vec::new();
        JpegEncoder::new_with_quality(&mut jpeg, 95).encode_image(image).unwrap();
        if let Some(tiff) = exif {
            let mut app1 = vec![0xFF, 0xE1];
            app1.extend_from_slice(&u16::try_from(2 + 6 + tiff.len()).unwrap().to_be_bytes());
            app1.extend_from_slice(b"Exif\0\0");
            app1.extend_from_slice(&tiff);
            jpeg.splice(2..2, app1);
        }
        std::fs::write(path, jpeg).unwrap();
    }

    fn grey(level: u8) -> RgbImage {
        RgbImage::from_pixel(16, 8, image::Rgb([level; 3]))
    }

    fn names(paths: &[PathBuf]) -> Vec<String> {
        paths.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect()
    }

    #[test]
    fn names_are_ordered_as_people_count() {
        let mut names = ["img10.jpg", "img2.jpg", "IMG_0001.jpg", "img1.jpg", "img02.jpg", "img1b.jpg", "img.jpg", "é1.jpg"];
        names.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(names, ["IMG_0001.jpg", "img.jpg", "img1.jpg", "img1b.jpg", "img02.jpg", "img2.jpg", "img10.jpg", "é1.jpg"]);
        assert_eq!(natural_cmp("a9999999999999999999999", "a10000000000000000000000"), Ordering::Less, "longer than any integer");
    }

    #[test]
    fn a_folder_is_its_visible_files_in_natural_order_and_a_glob_what_it_matches() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["img10.jpg", "img2.jpg", "img1.jpg", "notes.txt", ".DS_Store"] {
            std::fs::write(dir.path().join(name), b"").unwrap();
        }
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let folder = Stills::Folder(dir.path().to_owned()).photos().unwrap();
        assert_eq!(names(&folder), ["img1.jpg", "img2.jpg", "img10.jpg", "notes.txt"]);
        let pattern = format!("{}/*.jpg", dir.path().display());
        assert_eq!(names(&Stills::Pattern(pattern).photos().unwrap()), ["img1.jpg", "img2.jpg", "img10.jpg"]);
        let everything = format!("{}/*", dir.path().display());
        assert_eq!(names(&Stills::Pattern(everything).photos().unwrap()), ["img1.jpg", "img2.jpg", "img10.jpg", "notes.txt"], "no hidden file, no folder");
    }

    #[test]
    fn an_empty_folder_or_a_glob_matching_nothing_names_itself() {
        let dir = tempfile::tempdir().unwrap();
        let err = Stills::Folder(dir.path().to_owned()).photos().unwrap_err();
        assert!(matches!(err, StillsError::Empty { .. }) && err.to_string().starts_with(&format!("{}: no photos", dir.path().display())), "{err}");
        let pattern = format!("{}/*.jpg", dir.path().display());
        let err = Stills::Pattern(pattern.clone()).photos().unwrap_err();
        assert!(err.to_string().starts_with(&format!("{pattern}: no photos")), "{err}");
        let err = Stills::Folder(dir.path().join("missing")).photos().unwrap_err();
        assert!(matches!(err, StillsError::List { .. }) && err.to_string().contains("missing: cannot list"), "{err}");
        let err = Stills::Pattern("game/[*.jpg".into()).photos().unwrap_err();
        assert!(err.to_string().starts_with("game/[*.jpg: not a glob pattern"), "{err}");
    }

    #[test]
    fn exif_capture_times_count_seconds_with_their_fraction() {
        let read = |time: &str, subsec: &str| capture_time(&exif::Reader::new().read_raw(exif_data(None, Some((time, subsec)))).unwrap());
        let first = read("2026:12:31 23:59:59", "5").unwrap();
        let second = read("2027:01:01 00:00:01", "25").unwrap();
        assert!((second - first - 1.75).abs() < 1e-6, "{first} {second}");
        assert_eq!(read("1970:01:02 00:00:00", ""), Some(86_400.0));
        assert_eq!(read("2000:03:01 00:00:00", "").map(|s| s / 86_400.0), Some(11_017.0));
        assert_eq!(read("    :  :     :  :  ", ""), None, "blank");
        assert_eq!(read("2026:13:02 17:40:00", ""), None, "no 13th month");
        assert_eq!(capture_time(&exif::Reader::new().read_raw(exif_data(Some(1), None)).unwrap()), None);
    }

    #[test]
    fn a_series_is_timed_by_exif_only_where_every_photo_has_a_later_time() {
        assert_eq!(exif_times(&[Some(100.0), Some(100.5), Some(102.25)]), Ok(vec![0.0, 0.5, 2.25]));
        assert_eq!(exif_times(&[Some(100.0), None, Some(102.0)]), Err(Untimed { photo: 1 }));
        assert_eq!(exif_times(&[Some(100.0), Some(101.0), Some(101.0)]), Err(Untimed { photo: 2 }));
        assert_eq!(exif_times(&[None]), Err(Untimed { photo: 0 }));
    }

    #[test]
    fn photos_come_in_order_with_their_exif_times_or_a_second_apart() {
        let dir = tempfile::tempdir().unwrap();
        for (name, level, time) in [("b10.jpg", 200, ("2026:12:02 17:41:02", "25")), ("b2.jpg", 100, ("2026:12:02 17:41:00", "50")), ("b1.jpg", 0, ("2026:12:02 17:41:00", "00"))] {
            write_jpeg(&dir.path().join(name), &grey(level), Some(exif_data(None, Some(time))));
        }
        let mut reader = Reader::open(&Stills::Folder(dir.path().to_owned())).unwrap();
        let mut frames = Vec::new();
        while let Some(photo) = reader.next(frames.len() as u64) {
            let (image, t) = photo.unwrap();
            assert_eq!((image.cols(), image.rows(), image.typ()), (16, 8, CV_8UC3));
            frames.push((*image.at_2d::<opencv::core::Vec3b>(4, 8).unwrap(), t));
        }
        let levels: Vec<u8> = frames.iter().map(|(px, _)| px[0]).collect();
        assert!(levels[0] < 10 && (90..110).contains(&levels[1]) && levels[2] > 190, "in name order: {levels:?}");
        let times: Vec<f64> = frames.iter().map(|f| f.1).collect();
        assert!(times.iter().zip([0.0, 0.5, 2.25]).all(|(t, want)| (t - want).abs() < 1e-6), "{times:?}");

        // Another photo without EXIF: the order times them all.
        write_jpeg(&dir.path().join("b11.jpg"), &grey(50), None);
        let mut reader = Reader::open(&Stills::Folder(dir.path().to_owned())).unwrap();
        let times: Vec<f64> = std::iter::from_fn(|| reader.next(0)).map(|p| p.unwrap().1).collect();
        assert_eq!(times, [0.0, 1.0, 2.0, 3.0]);
    }

    #[test]
    fn a_photo_is_turned_upright_by_its_exif_orientation() {
        // Red on the left, blue on the right; orientation 6: the camera was turned a quarter
        // clockwise, so the picture must be turned a quarter clockwise to be upright, left
        // going to the top.
        let image = RgbImage::from_fn(16, 8, |x, _| if x < 8 { image::Rgb([255, 0, 0]) } else { image::Rgb([0, 0, 255]) });
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("turned.jpg");
        write_jpeg(&path, &image, Some(exif_data(Some(6), None)));
        let upright = decode(&path, 0).unwrap();
        assert_eq!((upright.cols(), upright.rows()), (8, 16));
        let bgr = |row, col| *upright.at_2d::<opencv::core::Vec3b>(row, col).unwrap();
        let (top, bottom) = (bgr(3, 4), bgr(12, 4));
        assert!(top[2] > 200 && top[0] < 60, "red at the top (BGR): {top:?}");
        assert!(bottom[0] > 200 && bottom[2] < 60, "blue at the bottom (BGR): {bottom:?}");
        // Without the tag, as it was.
        write_jpeg(&path, &image, None);
        let plain = decode(&path, 0).unwrap();
        assert_eq!((plain.cols(), plain.rows()), (16, 8));
    }

    #[test]
    fn every_exif_orientation_turns_the_photo_as_opencv_does() {
        // Four colours in the quadrants of a 32x16 picture, so that each turn and mirror shows.
        let colours = [[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 0]];
        let image = RgbImage::from_fn(32, 16, |x, y| image::Rgb(colours[usize::from(x >= 16) + 2 * usize::from(y >= 8)]));
        let dir = tempfile::tempdir().unwrap();
        for orientation in 1..=8 {
            let path = dir.path().join(format!("o{orientation}.jpg"));
            write_jpeg(&path, &image, Some(exif_data(Some(orientation), None)));
            let ours = decode(&path, 0).unwrap();
            // OpenCV's imread applies the orientation too (libjpeg: its pixels differ a little).
            let theirs = opencv::imgcodecs::imread(path.to_str().unwrap(), opencv::imgcodecs::IMREAD_COLOR).unwrap();
            assert_eq!((ours.cols(), ours.rows()), (theirs.cols(), theirs.rows()), "orientation {orientation}");
            let mut diff = Mat::default();
            opencv::core::absdiff(&ours, &theirs, &mut diff).unwrap();
            let mean = opencv::core::mean(&diff, &opencv::core::no_array()).unwrap();
            assert!(mean.iter().all(|&m| m < 8.0), "orientation {orientation}: {mean:?}");
        }
    }

    #[test]
    fn a_png_is_read_too_and_a_file_that_is_no_photo_names_itself_and_its_frame() {
        let dir = tempfile::tempdir().unwrap();
        grey(30).save(dir.path().join("1.png")).unwrap();
        std::fs::write(dir.path().join("2.jpg"), b"not a photo").unwrap();
        let mut reader = Reader::open(&Stills::Folder(dir.path().to_owned())).unwrap();
        let (image, t) = reader.next(0).unwrap().unwrap();
        assert_eq!((image.cols(), image.rows(), t), (16, 8, 0.0));
        let err = reader.next(1).unwrap().unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with(&format!("{}, frame 1: not a photo", dir.path().join("2.jpg").display())), "{text}");
        assert!(reader.next(2).is_none());
    }
}
