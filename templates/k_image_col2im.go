package templates

// Col2Im (opset 18): input [N, C*prod(block_shape), L] holds, for each
// sliding block position, the block's values column by column; Col2Im
// adds them back into an image [N, C, image_shape...] (the inverse of
// im2col), with dilations, pads (begins then ends) and strides.
func Col2Im(n *Node) error {
	X, I, B := n.Input(0), n.Input(1), n.Input(2)
	if X == nil || I == nil || B == nil {
		return n.Errorf("needs input, image_shape and block_shape")
	}
	k := I.Len()
	if len(X.Shape) != 3 || k == 0 || B.Len() != k || k > ewMaxRank {
		return n.Errorf("input %v with image_shape %v and block_shape %v", X.ShapeString(), I.ShapeString(), B.ShapeString())
	}
	ints := func(name string, def int) []int {
		v := make([]int, 0, 2*k)
		a := n.Attrs.Ints(name)
		want := k
		if name == "pads" {
			want = 2 * k
		}
		if a == nil {
			for i := 0; i < want; i++ {
				v = append(v, def)
			}
			return v
		}
		for _, x := range a {
			v = append(v, int(x))
		}
		return v
	}
	dil, pads, str := ints("dilations", 1), ints("pads", 0), ints("strides", 1)
	if len(dil) != k || len(pads) != 2*k || len(str) != k {
		return n.Errorf("dilations %v, pads %v, strides %v for %d spatial dims", dil, pads, str, k)
	}
	img, blk, cnt := make([]int, k), make([]int, k), make([]int, k)
	prodB, L := 1, 1
	for i := 0; i < k; i++ {
		img[i], blk[i] = int(ewI64At(I, i)), int(ewI64At(B, i))
		if blk[i] <= 0 || str[i] <= 0 || dil[i] <= 0 {
			return n.Errorf("block_shape, strides and dilations must be positive")
		}
		prodB *= blk[i]
		cnt[i] = (img[i]+pads[i]+pads[k+i]-(dil[i]*(blk[i]-1)+1))/str[i] + 1
		if cnt[i] < 0 {
			cnt[i] = 0
		}
		L *= cnt[i]
	}
	N := X.Shape[0]
	if X.Shape[1]%prodB != 0 || X.Shape[2] != L {
		return n.Errorf("input %v does not match %d blocks of %d at %v positions", X.ShapeString(), prodB, L, cnt)
	}
	C := X.Shape[1] / prodB
	shape := append([]int{N, C}, img...)
	out := n.Out[0]
	out.Resize(X.DType, shape...)
	imgSize := ewSize(img)
	acc := nnBuf[float64](n, 0, N*C*imgSize)
	clear(acc)
	bi, li := make([]int, k), make([]int, k)
	for nc := 0; nc < N*C; nc++ {
		clear(bi)
		for b := 0; b < prodB; b++ {
			row := (nc*prodB + b) * L
			clear(li)
			for l := 0; l < L; l++ {
				off, ok := 0, true
				for d := 0; d < k; d++ {
					p := li[d]*str[d] - pads[d] + bi[d]*dil[d]
					if p < 0 || p >= img[d] {
						ok = false
						break
					}
					off = off*img[d] + p
				}
				if ok {
					acc[nc*imgSize+off] += ewF64At(X, row+l)
				}
				col2imNext(li, cnt)
			}
			col2imNext(bi, blk)
		}
	}
	for i, v := range acc {
		ewSetF64(out, i, v)
	}
	return nil
}

// col2imNext advances a row-major multi-index over dims.
func col2imNext(idx, dims []int) {
	for d := len(idx) - 1; d >= 0; d-- {
		idx[d]++
		if idx[d] < dims[d] {
			return
		}
		idx[d] = 0
	}
}
