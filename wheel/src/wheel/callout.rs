// SPDX-License-Identifier: GPL-2.0

//! The BSD callout facility: placeholder until implemented.
