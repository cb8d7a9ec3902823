#!/usr/bin/env python3
# Independent reference of decision 074's mapping (double precision), for the tests' expected values.
import math
m1=2610/16384; m2=2523/4096*128; c1=3424/4096; c2=2413/4096*32; c3=2392/4096*32
def pq(L): y=(max(L,0)/10000)**m1; return ((c1+c2*y)/(1+c3*y))**m2
def ipq(E): e=E**(1/m2); return 10000*(max(e-c1,0)/(c2-c3*e))**(1/m1)
W=203.0
def eetf(rel, Lw=1000.0):
    pw=pq(Lw); mx=pq(W)/pw; ks=max(1.5*mx-0.5,0); e=min(pq(rel*W)/pw,1)
    if e<=ks: return rel
    t=(e-ks)/(1-ks)
    e2=(2*t**3-3*t**2+1)*ks+(t**3-2*t**2+t)*(1-ks)+(-2*t**3+3*t**2)*mx
    return ipq(e2*pw)/W
M=[1.6604910,-0.5876411,-0.0728499,-0.1245505,1.1328999,-0.0083494,-0.0181508,-0.1005789,1.1187297]
def s(v): v=min(max(v,0),1); return 255*(12.92*v if v<=0.0031308 else 1.055*v**(1/2.4)-0.055)
def sdr(nits, Lw=1000.0):
    r,g,b=[x/W for x in nits]
    r,g,b=(M[0]*r+M[1]*g+M[2]*b, M[3]*r+M[4]*g+M[5]*b, M[6]*r+M[7]*g+M[8]*b)
    hi=max(r,g,b)
    if hi>0:
        k=eetf(hi,Lw)/hi; r,g,b=r*k,g*k,b*k
    lo=min(r,g,b)
    if lo<0:
        y=0.2126*r+0.7152*g+0.0722*b
        t=y/(y-lo); r,g,b=[y+t*(c-y) for c in (r,g,b)]
    top=max(r,g,b)
    if top>1: r,g,b=r/top,g/top,b/top
    return tuple(round(s(c),1) for c in (r,g,b))
for p in [(0,0,0),(36.54,)*3,(203,)*3,(400,)*3,(1000,)*3,(203,0,0),(0,203,0),(1000,0,0)]:
    print(p, sdr(p), 'Lw4000:', sdr(p,4000))
