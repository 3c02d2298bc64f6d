// Scratch check (not committed): runs `steps` decode steps on deterministic random
// inputs with the KDA_DECODE_KERNEL of the environment and prints FNV hashes of
// every output and of the final state and conv state. Variants with the same
// arithmetic must print the same hashes.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cstring>
#include <cmath>
#include <cuda_runtime.h>
#include "kda/kda_decode.h"
#define CK(x) do { cudaError_t e = (x); if (e) { printf("CUDA %s line %d\n", cudaGetErrorString(e), __LINE__); exit(1);} } while (0)
__device__ unsigned hsh(unsigned long long x){x^=x>>33;x*=0xff51afd7ed558ccdULL;x^=x>>33;x*=0xc4ceb9fe1a85ec53ULL;x^=x>>33;return (unsigned)x;}
__global__ void fill16(uint16_t *p, size_t n, float lo, float hi, unsigned seed){
 for(size_t i=blockIdx.x*(size_t)blockDim.x+threadIdx.x;i<n;i+=(size_t)gridDim.x*blockDim.x){
  float u=(hsh(i*7919ULL+seed)&0xffffff)/16777216.0f; float f=lo+(hi-lo)*u; unsigned b=__float_as_uint(f); p[i]=(uint16_t)((b+0x7fff+((b>>16)&1))>>16);}}
__global__ void fill32(float *p, size_t n, unsigned seed){
 for(size_t i=blockIdx.x*(size_t)blockDim.x+threadIdx.x;i<n;i+=(size_t)gridDim.x*blockDim.x){
  float u=(hsh(i*104729ULL+seed)&0xffffff)/16777216.0f; p[i]=2*u-1;}}
static double g_sum, g_sq;
static unsigned long long fnv(const void *d, size_t bytes, int es=2){
 std::vector<unsigned char> h(bytes); CK(cudaMemcpy(h.data(), d, bytes, cudaMemcpyDeviceToHost));
 unsigned long long x=1469598103934665603ULL; for(size_t i=0;i+8<=bytes;i+=8){unsigned long long w; memcpy(&w,&h[i],8); x=(x^w)*1099511628211ULL; x^=x>>29;}
 g_sum=0; g_sq=0; for(size_t i=0;i<bytes/es;i++){ float f; if(es==4) memcpy(&f,&h[i*4],4); else { unsigned u=(unsigned)(h[2*i]|(h[2*i+1]<<8))<<16; memcpy(&f,&u,4);} if(f!=f){g_sum=NAN;} g_sum+=f; g_sq+=(double)f*f; }
 return x;}
int main(int argc,char**argv){
 int B=atoi(argv[1]),H=atoi(argv[2]),bf=atoi(argv[3]),steps=atoi(argv[4]);
 const int D=128; size_t C=(size_t)H*3*D; int slots=B+5; size_t SN=(size_t)H*D*D;
 size_t es=bf?2:4;
 void *state; uint16_t *conv,*x,*g,*be,*ga,*cw,*nw,*out; int32_t *slot;
 CK(cudaMalloc(&state,slots*SN*es)); CK(cudaMalloc(&conv,slots*3*C*2)); CK(cudaMalloc(&x,B*C*2));
 CK(cudaMalloc(&g,(size_t)B*H*D*2)); CK(cudaMalloc(&be,(size_t)B*H*2)); CK(cudaMalloc(&ga,(size_t)B*H*D*2));
 CK(cudaMalloc(&cw,C*4*2)); CK(cudaMalloc(&nw,D*2)); CK(cudaMalloc(&out,(size_t)B*H*D*2)); CK(cudaMalloc(&slot,B*4));
 std::vector<int32_t> sl(B); for(int i=0;i<B;i++) sl[i]=(int32_t)((i*37+3)%slots); // distinct if gcd(37,slots)=1
 { std::vector<char> used(slots,0); for(int i=0;i<B;i++){ if(used[sl[i]]) { for(int k=0;k<slots;k++) if(!used[k]){sl[i]=k;break;} } used[sl[i]]=1; } }
 CK(cudaMemcpy(slot,sl.data(),B*4,cudaMemcpyHostToDevice));
 if(bf) fill16<<<1024,256>>>((uint16_t*)state,slots*SN,-1,1,1); else fill32<<<1024,256>>>((float*)state,slots*SN,1);
 fill16<<<1024,256>>>(conv,slots*3*C,-1.5,1.5,2); fill16<<<64,256>>>(cw,C*4,-0.6,0.6,3); fill16<<<1,128>>>(nw,D,0.5,1.5,4);
 CK(cudaGetLastError());
 for(int s=0;s<steps;s++){
  fill16<<<1024,256>>>(x,B*C,-1.5,1.5,10+s); fill16<<<1024,256>>>(g,(size_t)B*H*D,-6,3,20+s);
  fill16<<<64,256>>>(be,(size_t)B*H,-3,3,30+s); fill16<<<1024,256>>>(ga,(size_t)B*H*D,-2,2,40+s);
  CK(cudaMemset(out,0xff,(size_t)B*H*D*2));
  kda_decode_args a={}; a.batch=B;a.heads=H;a.state_dtype=bf?KDA_BF16:KDA_F32;a.scale=0.08838834764831845f;a.norm_eps=1e-6f;
  a.x=x;a.g_raw=g;a.beta_raw=be;a.gate_raw=ga;a.conv_w=cw;a.norm_w=nw;a.slot=slot;a.state=state;a.conv_state=conv;a.out=out;
  int r=kda_decode(&a,0); if(r){printf("kda_decode %d\n",r);return 1;}
  CK(cudaDeviceSynchronize());
  {unsigned long long hv=fnv(out,(size_t)B*H*D*2); printf("B=%d H=%d %s step %d out %016llx sum %.9e sq %.9e\n",B,H,bf?"bf16":"fp32",s,hv,g_sum,g_sq);}
 }
 {unsigned long long hs=fnv(state,slots*SN*es,(int)es); double s1=g_sum,s2=g_sq; unsigned long long hc=fnv(conv,slots*3*C*2);
 printf("B=%d H=%d %s state %016llx sum %.9e sq %.9e conv %016llx\n",B,H,bf?"bf16":"fp32",hs,s1,s2,hc);}
 return 0;}
