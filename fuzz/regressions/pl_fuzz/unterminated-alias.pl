using Broken = SNAC<consume::Reduce, layout::Scattered,
