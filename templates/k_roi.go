package templates

import (
	"cmp"
	"math"
	"slices"
)

// NonMaxSuppression is ONNX NonMaxSuppression: per batch and class,
// greedily keep the best-scoring boxes that overlap no kept box by more
// than iou_threshold. Output rows are [batch, class, box].
func NonMaxSuppression(n *Node) error {
	boxes, scores := n.Input(0), n.Input(1)
	if boxes == nil || scores == nil || len(boxes.Shape) != 3 || boxes.Shape[2] != 4 || len(scores.Shape) != 3 {
		return n.Errorf("boxes must be [B,N,4] and scores [B,C,N]")
	}
	B, N, C := boxes.Shape[0], boxes.Shape[1], scores.Shape[1]
	if scores.Shape[0] != B || scores.Shape[2] != N {
		return n.Errorf("scores %v do not match boxes %v", scores.Shape, boxes.Shape)
	}
	var maxOut int64
	if t := n.Input(2); t != nil && t.Len() > 0 {
		maxOut = ewI64At(t, 0)
	}
	iouTh := 0.0
	if t := n.Input(3); t != nil && t.Len() > 0 {
		iouTh = float64(float32(ewF64At(t, 0)))
	}
	scoreTh, hasScoreTh := 0.0, false
	if t := n.Input(4); t != nil && t.Len() > 0 {
		scoreTh, hasScoreTh = float64(float32(ewF64At(t, 0))), true
	}
	center := n.Attrs.Int("center_point_box", 0) != 0
	st := miscScr[float64](n)
	// Corners as [y1, x1, y2, x2] with y1<=y2, x1<=x2, and areas.
	cs := st.get(0, B*N*4)
	for i := 0; i < B*N; i++ {
		a, b, c, d := ewF64At(boxes, i*4), ewF64At(boxes, i*4+1), ewF64At(boxes, i*4+2), ewF64At(boxes, i*4+3)
		if center { // [x_center, y_center, width, height]
			cs[i*4], cs[i*4+1], cs[i*4+2], cs[i*4+3] = b-d/2, a-c/2, b+d/2, a+c/2
		} else {
			cs[i*4], cs[i*4+1], cs[i*4+2], cs[i*4+3] = min(a, c), min(b, d), max(a, c), max(b, d)
		}
	}
	cand := st.getInts(0, N)
	sel := st.getInts(1, N)
	out := st.getI64(0, 0)[:0]
	for b := 0; b < B; b++ {
		for c := 0; c < C; c++ {
			sc := (b*C + c) * N
			nc := 0
			for i := 0; i < N; i++ {
				if !hasScoreTh || ewF64At(scores, sc+i) > scoreTh {
					cand[nc] = i
					nc++
				}
			}
			cd := cand[:nc]
			slices.SortStableFunc(cd, func(x, y int) int {
				return -cmp.Compare(ewF64At(scores, sc+x), ewF64At(scores, sc+y))
			})
			ns := 0
			for _, i := range cd {
				if int64(ns) >= maxOut {
					break
				}
				bi := cs[(b*N+i)*4 : (b*N+i)*4+4]
				keep := true
				for _, j := range sel[:ns] {
					bj := cs[(b*N+j)*4 : (b*N+j)*4+4]
					if miscIoU(bi, bj) > iouTh {
						keep = false
						break
					}
				}
				if keep {
					sel[ns] = i
					ns++
					out = append(out, int64(b), int64(c), int64(i))
				}
			}
		}
	}
	st.i64[0] = out
	y := n.Out[0]
	y.Resize(I64, len(out)/3, 3)
	copy(y.I64(), out)
	return nil
}

func miscIoU(a, b []float64) float64 {
	areaA := (a[2] - a[0]) * (a[3] - a[1])
	areaB := (b[2] - b[0]) * (b[3] - b[1])
	if areaA <= 0 || areaB <= 0 {
		return 0
	}
	ih := min(a[2], b[2]) - max(a[0], b[0])
	iw := min(a[3], b[3]) - max(a[1], b[1])
	if ih <= 0 || iw <= 0 {
		return 0
	}
	inter := ih * iw
	return inter / (areaA + areaB - inter)
}

// MaxRoiPool is ONNX MaxRoiPool (Caffe's ROI pooling): max over each bin
// of each region; rois rows are [batch, x1, y1, x2, y2].
func MaxRoiPool(n *Node) error {
	if ok, err := nnViaF32(n, MaxRoiPool); ok {
		return err
	}
	x, rois := n.Input(0), n.Input(1)
	if x == nil || rois == nil || len(x.Shape) != 4 || len(rois.Shape) != 2 || rois.Shape[1] != 5 {
		return n.Errorf("needs X [N,C,H,W] and rois [R,5]")
	}
	ps := n.Attrs.Ints("pooled_shape")
	if len(ps) != 2 {
		return n.Errorf("pooled_shape needs 2 entries")
	}
	PH, PW := int(ps[0]), int(ps[1])
	scale := float64(n.Attrs.Float("spatial_scale", 1))
	N, C, H, W := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	R := rois.Shape[0]
	y := n.Out[0]
	y.Resize(x.DType, R, C, PH, PW)
	for r := 0; r < R; r++ {
		b := int(ewF64At(rois, r*5))
		if b < 0 || b >= N {
			return n.Errorf("roi %d has batch index %d out of range", r, b)
		}
		sw := int(math.Round(ewF64At(rois, r*5+1) * scale))
		sh := int(math.Round(ewF64At(rois, r*5+2) * scale))
		ew := int(math.Round(ewF64At(rois, r*5+3) * scale))
		eh := int(math.Round(ewF64At(rois, r*5+4) * scale))
		rh, rw := max(eh-sh+1, 1), max(ew-sw+1, 1)
		bh, bw := float64(rh)/float64(PH), float64(rw)/float64(PW)
		for c := 0; c < C; c++ {
			plane := (b*C + c) * H * W
			for ph := 0; ph < PH; ph++ {
				hs := min(max(int(math.Floor(float64(ph)*bh))+sh, 0), H)
				he := min(max(int(math.Ceil(float64(ph+1)*bh))+sh, 0), H)
				for pw := 0; pw < PW; pw++ {
					ws := min(max(int(math.Floor(float64(pw)*bw))+sw, 0), W)
					we := min(max(int(math.Ceil(float64(pw+1)*bw))+sw, 0), W)
					v := math.Inf(-1)
					if he <= hs || we <= ws {
						v = 0
					}
					for h := hs; h < he; h++ {
						for w := ws; w < we; w++ {
							v = math.Max(v, ewF64At(x, plane+h*W+w))
						}
					}
					miscSetAt(y, ((r*C+c)*PH+ph)*PW+pw, v)
				}
			}
		}
	}
	return nil
}

// RoiAlign is ONNX RoiAlign (v10; v16 adds coordinate_transformation_mode,
// default half_pixel). Sampling and max mode follow onnxruntime, which
// the ONNX reference mirrors.
func RoiAlign(n *Node) error {
	if ok, err := nnViaF32(n, RoiAlign); ok {
		return err
	}
	x, rois, bidx := n.Input(0), n.Input(1), n.Input(2)
	if x == nil || rois == nil || bidx == nil || len(x.Shape) != 4 || len(rois.Shape) != 2 || rois.Shape[1] != 4 {
		return n.Errorf("needs X [N,C,H,W], rois [R,4] and batch_indices [R]")
	}
	N, C, H, W := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	R := rois.Shape[0]
	if bidx.Len() != R {
		return n.Errorf("batch_indices has %d entries, want %d", bidx.Len(), R)
	}
	OH, OW := int(n.Attrs.Int("output_height", 1)), int(n.Attrs.Int("output_width", 1))
	sr := int(n.Attrs.Int("sampling_ratio", 0))
	scale := float64(n.Attrs.Float("spatial_scale", 1))
	isMax := n.Attrs.String("mode", "avg") == "max"
	halfPixel := n.Version >= 16 && n.Attrs.String("coordinate_transformation_mode", "half_pixel") == "half_pixel"
	offset := 0.0
	if halfPixel {
		offset = 0.5
	}
	y := n.Out[0]
	y.Resize(x.DType, R, C, OH, OW)
	for r := 0; r < R; r++ {
		b := int(ewI64At(bidx, r))
		if b < 0 || b >= N {
			return n.Errorf("roi %d has batch index %d out of range", r, b)
		}
		x1, y1 := ewF64At(rois, r*4)*scale-offset, ewF64At(rois, r*4+1)*scale-offset
		x2, y2 := ewF64At(rois, r*4+2)*scale-offset, ewF64At(rois, r*4+3)*scale-offset
		rw, rh := x2-x1, y2-y1
		if !halfPixel {
			rw, rh = max(rw, 1), max(rh, 1)
		}
		bh, bw := rh/float64(OH), rw/float64(OW)
		gh, gw := sr, sr
		if sr <= 0 {
			gh, gw = int(math.Ceil(rh/float64(OH))), int(math.Ceil(rw/float64(OW)))
		}
		count := float64(max(gh*gw, 1))
		for c := 0; c < C; c++ {
			plane := (b*C + c) * H * W
			for ph := 0; ph < OH; ph++ {
				for pw := 0; pw < OW; pw++ {
					acc := 0.0
					first := true
					for iy := 0; iy < gh; iy++ {
						yy := y1 + float64(ph)*bh + (float64(iy)+0.5)*bh/float64(gh)
						for ix := 0; ix < gw; ix++ {
							xx := x1 + float64(pw)*bw + (float64(ix)+0.5)*bw/float64(gw)
							var v float64
							if !(yy < -1 || yy > float64(H) || xx < -1 || xx > float64(W)) {
								yv, xv := max(yy, 0), max(xx, 0)
								yl, xl := int(yv), int(xv)
								yh, xh := yl+1, xl+1
								if yl >= H-1 {
									yl, yh, yv = H-1, H-1, float64(H-1)
								}
								if xl >= W-1 {
									xl, xh, xv = W-1, W-1, float64(W-1)
								}
								ly, lx := yv-float64(yl), xv-float64(xl)
								hy, hx := 1-ly, 1-lx
								v1, v2 := ewF64At(x, plane+yl*W+xl), ewF64At(x, plane+yl*W+xh)
								v3, v4 := ewF64At(x, plane+yh*W+xl), ewF64At(x, plane+yh*W+xh)
								if isMax {
									v = max(hy*hx*v1, hy*lx*v2, ly*hx*v3, ly*lx*v4)
								} else {
									v = hy*hx*v1 + hy*lx*v2 + ly*hx*v3 + ly*lx*v4
								}
							}
							if isMax {
								if first || v > acc {
									acc = v
								}
								first = false
							} else {
								acc += v
							}
						}
					}
					if !isMax {
						acc /= count
					}
					miscSetAt(y, ((r*C+c)*OH+ph)*OW+pw, acc)
				}
			}
		}
	}
	return nil
}
